// Float32 arithmetic rounded one operation at a time, on the host and the device alike: nvcc
// would otherwise contract a * b + c into one fmaf, so a CPU twin and its CUDA kernel that share
// code written with these give the same bits (kernels/grid_sample.h, kernels/roi_pool.h).
#pragma once

#include "kernels/host_device.h"

namespace jetplan::kernels::rounded {

JP_HD_INLINE float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
JP_HD_INLINE float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
JP_HD_INLINE float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
JP_HD_INLINE float div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

}  // namespace jetplan::kernels::rounded
