// The Lrn family (LocalResponseNormalization): parameters and CPU twin (kernels/cpu/lrn.cc);
// CUDA kernels in kernels/cuda/lrn.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

// x and y [batch, channels, spatial]; y = x / (bias + alpha / size * sq)^beta with sq the sum of
// x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist.
struct LrnParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  int64_t size = 1;
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.f;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void lrn(const LrnParams& p, const float* x, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/lrn.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h).
#define JP_CUDA_VARIANTS_lrn(X, F) \
  X(F, jp_lrn_f16, kF16, 0) \
  X(F, jp_lrn_f32, kF32, 0)
