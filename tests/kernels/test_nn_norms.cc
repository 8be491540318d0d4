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

namespace jetplan::kernels {
namespace {

using namespace test_util;

constexpr Tolerance kNormTol{1e-5, 1e-5};

// y for one element from its statistics set `members`, in long double.
double normalized(double x, const std::vector<long double>& members, double epsilon,
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
std::vector<double> grouped_reference(const std::vector<float>& x, int64_t batch, int64_t channels,
                                      int64_t spatial, int64_t groups, float epsilon,
                                      const std::vector<float>& scale,
                                      const std::vector<float>& bias, bool per_group_affine) {
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

// ------------------------------------------------------------------------------ InstanceNorm

InstanceNormParams instance_params(int64_t n, int64_t c, int64_t s, float eps, Activation act) {
  InstanceNormParams p;
  p.batch = n;
  p.channels = c;
  p.spatial = s;
  p.epsilon = eps;
  p.act = act;
  return p;
}

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

// -------------------------------------------------------------------------------- LayerNorm

LayerNormParams layer_params(int64_t outer, int64_t inner, float eps, bool has_bias, Activation act) {
  LayerNormParams p;
  p.outer = outer;
  p.inner = inner;
  p.epsilon = eps;
  p.has_bias = has_bias;
  p.act = act;
  return p;
}

TEST(LayerNorm, OnnxData2dAxis1WithMeanAndInvStdDev) {
  const std::vector<float> x = {1.76405239f, 0.400157213f, 0.97873801f, 2.24089313f,
                                1.867558f,   -0.977277875f, 0.950088441f, -0.151357204f,
                                -0.103218853f, 0.410598516f, 0.144043565f, 1.45427346f};
  const std::vector<float> w = {-0.672460437f, -0.359553158f, -0.813146293f, -1.7262826f};
  const std::vector<float> b = {0.177426144f, -0.401780933f, -1.63019836f, 0.462782264f};
  Output y(12), mean(3), inv_std(3);
  cpu::layer_norm(layer_params(3, 4, 1e-5f, true, {}), x.data(), w.data(), b.data(), y.data(),
                  mean.data(), inv_std.data());
  const Tolerance tol{2e-6, 2e-7};
  EXPECT_TRUE(all_close(y,
                        {-0.219670609, 0.0785286725, -1.20844841, -1.71924365, -0.723488688,
                         0.0646668673, -2.02805328, 1.3806628, 0.834639549, -0.361875027,
                         -1.17449379, -2.38340139},
                        tol));
  EXPECT_TRUE(all_close(mean, {1.34596014, 0.422252834, 0.476424158}, tol));
  EXPECT_TRUE(all_close(inv_std, {1.41239929, 0.926952541, 1.68608344}, tol));
}

TEST(LayerNorm, RandomWithAndWithoutBiasAndOptionalStats) {
  SEEDED_RNG(rng);
  for (const auto& [outer, inner] : {std::pair<int64_t, int64_t>{1, 1}, {4, 16}, {7, 3}, {2, 513}})
    for (bool has_bias : {false, true})
      for (bool stats : {false, true}) {
        SCOPED_TRACE("outer " + std::to_string(outer) + " inner " + std::to_string(inner) +
                     " bias " + std::to_string(has_bias) + " stats " + std::to_string(stats));
        const std::vector<float> x = rng.uniform(outer * inner, -2.f, 6.f);
        const std::vector<float> scale = rng.uniform(inner, -2.f, 2.f);
        const std::vector<float> bias = rng.uniform(inner, -1.f, 1.f);
        const Activation act = has_bias ? Activation{ActivationKind::kSilu, 0, 0} : Activation{};
        Output y(outer * inner), mean(outer), inv_std(outer);
        cpu::layer_norm(layer_params(outer, inner, 1e-4f, has_bias, act), x.data(), scale.data(),
                        has_bias ? bias.data() : nullptr, y.data(), stats ? mean.data() : nullptr,
                        stats ? inv_std.data() : nullptr);
        std::vector<double> want, want_mean, want_inv;
        for (int64_t o = 0; o < outer; ++o) {
          std::vector<long double> row(x.begin() + o * inner, x.begin() + (o + 1) * inner);
          long double m = 0, v = 0;
          for (long double e : row) m += e / inner;
          for (long double e : row) v += (e - m) * (e - m) / inner;
          want_mean.push_back(double(m));
          want_inv.push_back(double(1 / std::sqrt(v + 1e-4f)));
          for (int64_t i = 0; i < inner; ++i) {
            double r = normalized(x[size_t(o * inner + i)], row, 1e-4f, scale[size_t(i)],
                                  has_bias ? bias[size_t(i)] : 0.0);
            if (has_bias) r = r / (1 + std::exp(-r));  // silu
            want.push_back(r);
          }
        }
        EXPECT_TRUE(all_close(y, want, kNormTol));
        if (stats) {
          EXPECT_TRUE(all_close(mean, want_mean, kNormTol));
          EXPECT_TRUE(all_close(inv_std, want_inv, kNormTol));
        } else {
          EXPECT_TRUE(is_poison(mean[0]) && mean.guard_intact());  // null: not written
        }
      }
}

// -------------------------------------------------------------------------------- GroupNorm

GroupNormParams group_params(int64_t n, int64_t c, int64_t s, int64_t g, float eps, bool per_group,
                             Activation act) {
  GroupNormParams p;
  p.batch = n;
  p.channels = c;
  p.spatial = s;
  p.groups = g;
  p.epsilon = eps;
  p.affine_per_group = per_group;
  p.act = act;
  return p;
}

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

// -------------------------------------------------------------------------------------- LRN

LrnParams lrn_params(int64_t n, int64_t c, int64_t s, int64_t size, float alpha, float beta,
                     float bias) {
  LrnParams p;
  p.batch = n;
  p.channels = c;
  p.spatial = s;
  p.size = size;
  p.alpha = alpha;
  p.beta = beta;
  p.bias = bias;
  return p;
}

TEST(Lrn, HandOddAndEvenWindows) {
  const std::vector<float> x = {1, 2, 3, 4};
  // size 3 (alpha / size = 1, beta 1, bias 1): windows {0,1} {0,1,2} {1,2,3} {2,3}.
  Output odd(4);
  cpu::lrn(lrn_params(1, 4, 1, 3, 3.f, 1.f, 1.f), x.data(), odd.data());
  EXPECT_TRUE(all_close(odd, {1.0 / 6, 2.0 / 15, 3.0 / 30, 4.0 / 26}, {1e-7, 0}));
  // size 2: floor(1/2) = 0 channels before, ceil(1/2) = 1 after: {0,1} {1,2} {2,3} {3}.
  Output even(4);
  cpu::lrn(lrn_params(1, 4, 1, 2, 2.f, 1.f, 1.f), x.data(), even.data());
  EXPECT_TRUE(all_close(even, {1.0 / 6, 2.0 / 14, 3.0 / 26, 4.0 / 17}, {1e-7, 0}));
  // beta 0.5, bias 2, two spatial positions: channel 0 of position 1 sees x = 10 and 20.
  const std::vector<float> two = {1, 10, 2, 20};  // [1, 2 channels, 2 spatial]
  Output half(4);
  cpu::lrn(lrn_params(1, 2, 2, 2, 0.02f, 0.5f, 2.f), two.data(), half.data());
  EXPECT_TRUE(all_close(half,
                        {1 / std::sqrt(2 + 0.01 * 5), 10 / std::sqrt(2 + 0.01 * 500),
                         2 / std::sqrt(2 + 0.01 * 4), 20 / std::sqrt(2 + 0.01 * 400)},
                        {1e-6, 0}));
}

TEST(Lrn, RandomMatchesFormula) {
  SEEDED_RNG(rng);
  for (int64_t size : {1, 2, 3, 4, 5, 9}) {
    SCOPED_TRACE("size " + std::to_string(size));
    const int64_t n = 2, c = 7, s = 6;
    const std::vector<float> x = rng.uniform(n * c * s, -3.f, 3.f);
    const float alpha = 1e-2f, beta = 0.75f, bias = 1.5f;
    Output y(n * c * s);
    cpu::lrn(lrn_params(n, c, s, size, alpha, beta, bias), x.data(), y.data());
    std::vector<double> want;
    for (int64_t i = 0; i < n * c * s; ++i) {
      const int64_t b = i / (c * s), ch = i / s % c, sp = i % s;
      long double sq = 0;
      for (int64_t other = 0; other < c; ++other) {
        const int64_t offset = other - ch;  // window: -floor((size-1)/2) .. ceil((size-1)/2)
        if (offset >= -((size - 1) / 2) && offset <= size / 2) {
          const long double v = x[size_t((b * c + other) * s + sp)];
          sq += v * v;
        }
      }
      want.push_back(double(x[size_t(i)] / std::pow(bias + alpha / size * sq, (long double)beta)));
    }
    EXPECT_TRUE(all_close(y, want, {1e-6, 1e-7}));
  }
}

}  // namespace
}  // namespace jetplan::kernels
