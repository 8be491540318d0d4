// Pad (constant, reflect, edge, wrap) on the GPU: moves elements of p.elem_bytes, bit-exact for
// any dtype. Twin: kernels/cpu/pad.cc.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/element_copy.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/pad.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ void pad_kernel(const StepPointers& ptrs, const PadParams& p) {
  const auto* in = static_cast<const unsigned char*>(ptrs.in[0]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  unsigned char value[8];
  for (int k = 0; k < 8; ++k) value[k] = p.value[k];
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, offset = 0, stride = 1;
    bool inside = true;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t c = pad_source_coord(p, d, rest % p.out_dims[d]);
      rest /= p.out_dims[d];
      if (c < 0) {
        inside = false;
        break;
      }
      offset += c * stride;
      stride *= p.x_dims[d];
    }
    unsigned char* dst = out + i * p.elem_bytes;
    if (inside) {
      copy_elem(dst, in + offset * p.elem_bytes, p.elem_bytes);
    } else {
      for (int64_t k = 0; k < p.elem_bytes && k < 8; ++k) dst[k] = value[k];
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_pad, PadParams, jetplan::kernels::cuda::pad_kernel)
