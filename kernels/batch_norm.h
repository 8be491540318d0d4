// The BatchNorm family (inference BatchNormalization): parameters and CPU twin
// (kernels/cpu/batch_norm.cc); CUDA kernels in kernels/cuda/batch_norm.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

// x and y [batch, channels, spatial] ([batch, spatial, channels] when channels_last);
// per-channel scale, bias, mean, var. y = scale * (x - mean) / sqrt(var + epsilon) + bias
struct BatchNormParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  float epsilon = 1e-5f;
  bool channels_last = false;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void batch_norm(const BatchNormParams& p, const float* x, const float* scale, const float* bias,
                const float* mean, const float* var, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/batch_norm.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_batch_norm(X, F) \
  X(F, jp_batch_norm_f16, kF16, 0) \
  X(F, jp_batch_norm_f32, kF32, 0)
