// The normalization kernels against the ONNX backend test data (test_instancenorm_example,
// test_layer_normalization_2d_axis1), hand cases, and a per-element formula: for every output
// element the reference collects the members of its statistics set by testing each input
// element's (n, channel, group) membership, then evaluates the ONNX formula in long double.
// GroupNorm is also cross-checked against the other kernels at groups == channels and groups == 1.

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/cpu/normalization_reference.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

TEST(GroupNorm, HandTwoGroups) {
  // Groups {c0, c1} = {1, 2, 3, 4}, {c2, c3} = {10, 10, 30, 30}: means 2.5 and 20, variances
  // 1.25 and 100; epsilon 0 keeps the numbers exact enough to write down.
  const std::vector<float> x = {1, 2, 3, 4, 10, 10, 30, 30};
  const std::vector<float> scale = {1, 2, 1, -1}, bias = {0, 0, 5, 5};
  Output y(8);
  cpu::group_norm(group_params(1, 4, 2, 2, 0.f, false, {}), x.data(), scale.data(), bias.data(),
                  y.data());
  const double k = 1 / std::sqrt(1.25);
  EXPECT_TRUE(all_close(y, {-1.5 * k, -0.5 * k, 2 * 0.5 * k, 2 * 1.5 * k, 4, 4, 4, 4}, {1e-6, 1e-7}));

  // Opset 18: one scale and bias per group.
  const std::vector<float> gs = {2, -1}, gb = {1, 0};
  Output z(8);
  cpu::group_norm(group_params(1, 4, 2, 2, 0.f, true, {}), x.data(), gs.data(), gb.data(), z.data());
  EXPECT_TRUE(all_close(z, {1 - 3 * k, 1 - k, 1 + k, 1 + 3 * k, 1, 1, -1, -1}, {1e-6, 1e-7}));
}

TEST(GroupNorm, RandomBothAffineLayouts) {
  SEEDED_RNG(rng);
  for (const auto& [n, c, s, g] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 4, 5, 2},
                                   {2, 6, 7, 3}, {3, 8, 1, 8}, {2, 9, 4, 1}})
    for (bool per_group : {false, true}) {
      SCOPED_TRACE("channels " + std::to_string(c) + " groups " + std::to_string(g) +
                   " per_group " + std::to_string(per_group));
      const std::vector<float> x = rng.uniform(n * c * s, -4.f, 4.f);
      const int64_t affine = per_group ? g : c;
      const std::vector<float> scale = rng.uniform(affine, -2.f, 2.f);
      const std::vector<float> bias = rng.uniform(affine, -1.f, 1.f);
      Output y(n * c * s);
      cpu::group_norm(group_params(n, c, s, g, 1e-5f, per_group, {}), x.data(), scale.data(),
                      bias.data(), y.data());
      EXPECT_TRUE(
          all_close(y, grouped_reference(x, n, c, s, g, 1e-5f, scale, bias, per_group), kNormTol));
    }
}

TEST(GroupNorm, AgreesWithInstanceNormAndLayerNorm) {
  SEEDED_RNG(rng);
  const int64_t n = 2, c = 6, s = 5;
  const std::vector<float> x = rng.uniform(n * c * s, -3.f, 3.f);
  const std::vector<float> scale = rng.uniform(c, -2.f, 2.f), bias = rng.uniform(c, -1.f, 1.f);
  const Activation act{ActivationKind::kTanh, 0, 0};

  Output groups_eq_channels(n * c * s), instance(n * c * s);
  cpu::group_norm(group_params(n, c, s, c, 1e-5f, false, act), x.data(), scale.data(), bias.data(),
                  groups_eq_channels.data());
  cpu::instance_norm(instance_params(n, c, s, 1e-5f, act), x.data(), scale.data(), bias.data(),
                     instance.data());
  std::vector<double> want(instance.data(), instance.data() + n * c * s);
  EXPECT_TRUE(all_close(groups_eq_channels, want, kExact));

  // One group: LayerNorm over [c * s] with the per-channel scale expanded over the spatial dim.
  std::vector<float> wide_scale, wide_bias;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < s; ++i) {
      wide_scale.push_back(scale[size_t(ch)]);
      wide_bias.push_back(bias[size_t(ch)]);
    }
  Output one_group(n * c * s), layer(n * c * s);
  cpu::group_norm(group_params(n, c, s, 1, 1e-5f, false, act), x.data(), scale.data(), bias.data(),
                  one_group.data());
  cpu::layer_norm(layer_params(n, c * s, 1e-5f, true, act), x.data(), wide_scale.data(),
                  wide_bias.data(), layer.data(), nullptr, nullptr);
  std::vector<double> want_layer(layer.data(), layer.data() + n * c * s);
  EXPECT_TRUE(all_close(one_group, want_layer, kExact));
}

}  // namespace
}  // namespace jetplan::kernels
