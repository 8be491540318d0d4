// Broadcast (Expand, Tile) on the GPU: moves elements of p.elem_bytes, bit-exact for any dtype.
// Twin: kernels/cpu/broadcast.cc.
#include <cstdint>

#include "kernels/broadcast.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/element_copy.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ void broadcast_kernel(const StepPointers& ptrs, const BroadcastParams& p) {
  const auto* in = static_cast<const unsigned char*>(ptrs.in[0]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, offset = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      offset += (rest % p.out_dims[d] % p.x_dims[d]) * p.x_strides[d];
      rest /= p.out_dims[d];
    }
    copy_elem(out + i * p.elem_bytes, in + offset * p.elem_bytes, p.elem_bytes);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_broadcast, BroadcastParams, jetplan::kernels::cuda::broadcast_kernel)
