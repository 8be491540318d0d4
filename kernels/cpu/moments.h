// The statistics of the normalization twins (InstanceNorm, LayerNorm, GroupNorm) and the
// normalized, activated output value.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/activation.h"

namespace jetplan::kernels::cpu {

// Population mean and 1 / sqrt(var + epsilon) of `count` elements at x[0], x[stride], ...,
// two passes in double in increasing index order (no E[x^2] - E[x]^2 cancellation). rms: the
// mean is taken as 0 (RMSNormalization: 1 / sqrt(mean(x^2) + epsilon)).
struct Moments {
  double mean;
  double inv_std;
};

inline Moments moments(const float* x, int64_t count, float epsilon, bool rms = false) {
  double sum = 0.0;
  for (int64_t i = 0; i < count && !rms; ++i) sum += x[i];
  const double mean = sum / static_cast<double>(count);
  double sq = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = x[i] - mean;
    sq += d * d;
  }
  const double var = sq / static_cast<double>(count);
  return {mean, 1.0 / std::sqrt(var + static_cast<double>(epsilon))};
}

inline float normalize(const Moments& m, float x, double scale, double bias,
                       const Activation& act) {
  const double v = scale * ((x - m.mean) * m.inv_std) + bias;
  return apply_activation(act, static_cast<float>(v));
}

}  // namespace jetplan::kernels::cpu
