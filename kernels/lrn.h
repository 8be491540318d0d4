// The Lrn family (LocalResponseNormalization): parameters and CPU twin (kernels/cpu/lrn.cc).
// No CUDA kernel yet.
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
