// The normalization kernels against the ONNX backend test data (test_instancenorm_example,
// test_layer_normalization_2d_axis1), hand cases, and a per-element formula: for every output
// element the reference collects the members of its statistics set by testing each input
// element's (n, channel, group) membership, then evaluates the ONNX formula in long double.
// GroupNorm is also cross-checked against the other kernels at groups == channels and groups == 1.

#include <algorithm>
#include <cmath>
#include <cstdint>
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

// RMSNormalization (rms): y = scale * x / sqrt(mean(x^2) + epsilon) + bias, no mean subtracted,
// evaluated in long double per row; inv_std_dev is 1 / that root.
TEST(LayerNorm, RmsMatchesOnnxFormula) {
  SEEDED_RNG(rng);
  for (const auto& [outer, inner] : {std::pair<int64_t, int64_t>{1, 1}, {3, 8}, {5, 257}})
    for (bool has_bias : {false, true}) {
      SCOPED_TRACE("outer " + std::to_string(outer) + " inner " + std::to_string(inner));
      // An offset mean: subtracting it (LayerNorm) would give other values.
      const std::vector<float> x = rng.uniform(outer * inner, 1.f, 5.f);
      const std::vector<float> scale = rng.uniform(inner, -2.f, 2.f);
      const std::vector<float> bias = rng.uniform(inner, -1.f, 1.f);
      LayerNormParams p = layer_params(outer, inner, 1e-3f, has_bias, {});
      p.rms = true;
      Output y(outer * inner), inv_std(outer);
      cpu::layer_norm(p, x.data(), scale.data(), has_bias ? bias.data() : nullptr, y.data(),
                      nullptr, inv_std.data());
      std::vector<double> want, want_inv;
      for (int64_t o = 0; o < outer; ++o) {
        long double sq = 0;
        for (int64_t i = 0; i < inner; ++i) {
          const long double e = x[size_t(o * inner + i)];
          sq += e * e / inner;
        }
        const long double inv = 1 / std::sqrt(sq + 1e-3f);
        want_inv.push_back(double(inv));
        for (int64_t i = 0; i < inner; ++i)
          want.push_back(double(scale[size_t(i)] * (x[size_t(o * inner + i)] * inv) +
                                (has_bias ? bias[size_t(i)] : 0.0)));
      }
      EXPECT_TRUE(all_close(y, want, kNormTol));
      EXPECT_TRUE(all_close(inv_std, want_inv, kNormTol));
    }
}

// The Int8 form (an INT8 plan's LayerNorm in front of an INT8 GEMM): each output the ONNX formula
// (long double) times the inverse scale, rounded half to even and saturated to [-128, 127]. A
// value within 1e-4 of a rounding boundary may round either way (the twin's float output is
// rounded once before the quantization); the scale saturates the tails (both ends checked).
TEST(LayerNorm, IntoInt8RoundsTheFormulaWithTheInverseScale) {
  SEEDED_RNG(rng);
  for (bool rms : {false, true})
    for (const auto& [outer, inner] : {std::pair<int64_t, int64_t>{4, 64}, {3, 257}}) {
      SCOPED_TRACE("outer " + std::to_string(outer) + " inner " + std::to_string(inner) +
                   " rms " + std::to_string(rms));
      const std::vector<float> x = rng.uniform(outer * inner, -2.f, 6.f);
      const std::vector<float> scale = rng.uniform(inner, -2.f, 2.f);
      const std::vector<float> bias = rng.uniform(inner, -1.f, 1.f);
      LayerNormParams p = layer_params(outer, inner, 1e-4f, true, {});
      p.rms = rms;
      p.inv_scale_input = 3;
      const float inv_y = 127.f / 2.5f;
      std::vector<int8_t> y(size_t(outer * inner), 0x5a);
      cpu::layer_norm_to_int8(p, x.data(), scale.data(), bias.data(), inv_y, y.data());
      int top = 0, bottom = 0;
      for (int64_t o = 0; o < outer; ++o) {
        std::vector<long double> row(x.begin() + o * inner, x.begin() + (o + 1) * inner);
        long double m = 0, v = 0;
        if (!rms)
          for (long double e : row) m += e / inner;
        for (long double e : row) v += (e - m) * (e - m) / inner;
        const long double inv = 1 / std::sqrt(v + 1e-4f);
        for (int64_t i = 0; i < inner; ++i) {
          const long double r =
              (scale[size_t(i)] * ((row[size_t(i)] - m) * inv) + bias[size_t(i)]) * inv_y;
          const long double q = std::min(127.L, std::max(-128.L, std::nearbyint(r)));
          const int got = y[size_t(o * inner + i)];
          const bool boundary = std::fabs(std::fabs(r - std::floor(r)) - 0.5L) < 1e-4L;
          if (!boundary || std::fabs(r) > 127.5L)
            EXPECT_EQ(got, static_cast<int>(q)) << "row " << o << " element " << i << ": " << double(r);
          else
            EXPECT_LE(std::fabs(got - q), 1.L);
          top += got == 127;
          bottom += got == -128;
        }
      }
      EXPECT_GT(top, 0);
      EXPECT_GT(bottom, 0);
    }
}

}  // namespace
}  // namespace jetplan::kernels
