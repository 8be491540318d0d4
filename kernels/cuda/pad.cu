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
  unsigned char value[8];
  for (int k = 0; k < 8; ++k) value[k] = p.value[k];
  move_elements(
      ptrs, p.rank, p.out_dims, p.elem_bytes,
      [&p](int64_t i, int64_t* offset) {
        int64_t rest = i, stride = 1;
        for (int32_t d = p.rank - 1; d >= 0; --d) {
          const int64_t c = pad_source_coord(p, d, rest % p.out_dims[d]);
          rest /= p.out_dims[d];
          if (c < 0) return false;
          *offset += c * stride;
          stride *= p.x_dims[d];
        }
        return true;
      },
      value);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_pad, PadParams, jetplan::kernels::cuda::pad_kernel)
