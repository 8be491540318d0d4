// The GroupNorm family: parameters and CPU twin (kernels/cpu/group_norm.cc); CUDA kernels
// in kernels/cuda/group_norm.cu.
// Statistics are the population mean and variance (divide by the count), in double, two passes
// in increasing index order (kernels/cpu/moments.h); y = act(scale * (x - mean) / sqrt(var +
// epsilon) + bias).
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"

namespace jetplan::kernels {

// x and y [batch, channels, spatial]; statistics per (n, group) over channels/groups channels;
// scale and bias [channels] (opset 21), or [groups] with affine_per_group (opset 18).
struct GroupNormParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  int64_t groups = 1;
  float epsilon = 1e-5f;
  bool affine_per_group = false;
  Activation act;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void group_norm(const GroupNormParams& p, const float* x, const float* scale, const float* bias,
                float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/group_norm.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h). A block of 256 threads per row
// (block reductions over 8 warps; kernels/cuda/norm_rows.cuh).
#define JP_CUDA_VARIANTS_group_norm(X, F) \
  X(F, jp_group_norm_f16, kF16, 256) \
  X(F, jp_group_norm_f32, kF32, 256)
