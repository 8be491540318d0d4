// The InstanceNorm family: parameters and CPU twin (kernels/cpu/instance_norm.cc); CUDA
// kernels in kernels/cuda/instance_norm.cu.
// Statistics are the population mean and variance (divide by the count), in double, two passes
// in increasing index order (kernels/cpu/moments.h); y = act(scale * (x - mean) / sqrt(var +
// epsilon) + bias).
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"

namespace jetplan::kernels {

// x and y [batch, channels, spatial]; statistics per (n, c); scale and bias [channels].
struct InstanceNormParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  float epsilon = 1e-5f;
  Activation act;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void instance_norm(const InstanceNormParams& p, const float* x, const float* scale,
                   const float* bias, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/instance_norm.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h). A block of 256 threads per row
// (block reductions over 8 warps; kernels/cuda/norm_rows.cuh).
#define JP_CUDA_VARIANTS_instance_norm(X, F) \
  X(F, jp_instance_norm_f16, kF16, 256) \
  X(F, jp_instance_norm_f32, kF32, 256)
