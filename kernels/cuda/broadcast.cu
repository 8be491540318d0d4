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
  move_elements(ptrs, p.rank, p.out_dims, p.elem_bytes, [&p](int64_t i, int64_t* offset) {
    int64_t rest = i;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      *offset += (rest % p.out_dims[d] % p.x_dims[d]) * p.x_strides[d];
      rest /= p.out_dims[d];
    }
    return true;
  });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_broadcast, BroadcastParams, jetplan::kernels::cuda::broadcast_kernel)
