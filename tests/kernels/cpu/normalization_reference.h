// References and params of the normalization tests (InstanceNorm, LayerNorm, GroupNorm): the
// statistics of a group of elements in long double, straight from the formula.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels::test_util {

constexpr Tolerance kNormTol{1e-5, 1e-5};

// y for one element from its statistics set `members`, in long double.
inline double normalized(double x, const std::vector<long double>& members, double epsilon,
                         double scale, double bias) {
  long double mean = 0, var = 0;
  for (long double v : members) mean += v;
  mean /= members.size();
  for (long double v : members) var += (v - mean) * (v - mean);
  var /= members.size();
  return double(scale * (x - mean) / std::sqrt(var + epsilon) + bias);
}

// Reference for [batch, channels, spatial] norms: elements share statistics when they have the
// same n and the same group (channel / channels_per_group); instance norm is groups == channels.
inline std::vector<double> grouped_reference(const std::vector<float>& x, int64_t batch,
                                             int64_t channels, int64_t spatial, int64_t groups,
                                             float epsilon, const std::vector<float>& scale,
                                             const std::vector<float>& bias,
                                             bool per_group_affine) {
  const int64_t per_group = channels / groups;
  std::vector<double> y;
  for (int64_t i = 0; i < batch * channels * spatial; ++i) {
    const int64_t n = i / (channels * spatial), c = i / spatial % channels;
    std::vector<long double> members;
    for (int64_t j = 0; j < batch * channels * spatial; ++j) {
      const int64_t nj = j / (channels * spatial), cj = j / spatial % channels;
      if (nj == n && cj / per_group == c / per_group) members.push_back(x[size_t(j)]);
    }
    const size_t a = size_t(per_group_affine ? c / per_group : c);
    y.push_back(normalized(x[size_t(i)], members, epsilon, scale[a], bias[a]));
  }
  return y;
}

inline InstanceNormParams instance_params(int64_t n, int64_t c, int64_t s, float eps,
                                          Activation act) {
  return InstanceNormParams{n, c, s, eps, act};
}

inline LayerNormParams layer_params(int64_t outer, int64_t inner, float eps, bool has_bias,
                                    Activation act) {
  return LayerNormParams{outer, inner, eps, has_bias, act};
}

// -------------------------------------------------------------------------------- GroupNorm

inline GroupNormParams group_params(int64_t n, int64_t c, int64_t s, int64_t g, float eps,
                                    bool per_group, Activation act) {
  return GroupNormParams{n, c, s, g, eps, per_group, act};
}

}  // namespace jetplan::kernels::test_util
