// The InstanceNorm family: parameters and CPU twin (kernels/cpu/instance_norm.cc). No CUDA
// kernel yet.
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
