// The GroupNorm family: parameters and CPU twin (kernels/cpu/group_norm.cc). No CUDA kernel
// yet.
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
