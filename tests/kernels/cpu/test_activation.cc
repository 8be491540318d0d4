// cpu::activation and cpu::binary against formulas written here in double (through a different
// identity where possible), hand-computed cases, and broadcasting by modulo indexing.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/scalar_ops.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ------------------------------------------------------------------------------- activation

constexpr Tolerance kActivationTol{1e-5, 1e-6};

TEST(Activation, TableCoversEveryKindInOrder) {
  for (int k = 0; k < kActivationKindCount; ++k)
    EXPECT_EQ(static_cast<int>(kEveryActivation[k].kind), k);
}

TEST(Activation, EveryKindMatchesItsFormula) {
  SEEDED_RNG(rng);
  std::vector<float> x = {-100.f, -30.f, -10.f, -6.f, -3.0001f, -3.f, -2.5f, -1.f, -0.5f,
                          -1e-3f, -1e-6f, 0.f,    1e-6f, 1e-3f,   0.5f, 1.f,  2.f,  2.5f,
                          3.f,    3.0001f, 6.f,  10.f,  30.f,    100.f};
  const std::vector<float> random = rng.uniform(64, -8.f, 8.f);
  x.insert(x.end(), random.begin(), random.end());
  const int64_t n = static_cast<int64_t>(x.size());

  for (const Activation& act : kEveryActivation) {
    SCOPED_TRACE("activation kind " + std::to_string(int(act.kind)));
    std::vector<double> want;
    for (float v : x) want.push_back(activation_ref(act, v));

    Output y(n);
    cpu::activation({n, act}, x.data(), y.data());
    EXPECT_TRUE(all_close(y, want, kActivationTol));

    Output single(n);
    for (int64_t i = 0; i < n; ++i) single.data()[i] = cpu::apply_activation(act, x[size_t(i)]);
    EXPECT_TRUE(all_close(single, want, kActivationTol));
  }
}

TEST(Activation, HandValues) {
  const Activation clip{ActivationKind::kClip, -1.f, 1.f};
  EXPECT_EQ(cpu::apply_activation(clip, -3.f), -1.f);
  EXPECT_EQ(cpu::apply_activation(clip, 0.25f), 0.25f);
  EXPECT_EQ(cpu::apply_activation(clip, 3.f), 1.f);
  EXPECT_EQ(cpu::apply_activation({ActivationKind::kLeakyRelu, 0.5f, 0.f}, -4.f), -2.f);
  EXPECT_EQ(cpu::apply_activation({ActivationKind::kHardSwish, 0.f, 0.f}, 1.5f), 1.125f);
  EXPECT_EQ(cpu::apply_activation({ActivationKind::kHardSigmoid, 0.5f, 0.25f}, 1.f), 0.75f);
  EXPECT_FLOAT_EQ(cpu::apply_activation({ActivationKind::kSigmoid, 0.f, 0.f}, 0.f), 0.5f);
  EXPECT_FLOAT_EQ(cpu::apply_activation({ActivationKind::kGelu, 0.f, 0.f}, 1.f), 0.8413447f);
  EXPECT_FLOAT_EQ(cpu::apply_activation({ActivationKind::kElu, 2.f, 0.f}, -1.f), -1.2642411f);
  // ONNX's Selu example: alpha 2, gamma 3 on [-1, 0, 1] gives [-3.79272318, 0, 3].
  const Activation selu{ActivationKind::kSelu, 2.f, 3.f};
  EXPECT_FLOAT_EQ(cpu::apply_activation(selu, -1.f), -3.7927232f);
  EXPECT_EQ(cpu::apply_activation(selu, 0.f), 0.f);
  EXPECT_EQ(cpu::apply_activation(selu, 1.f), 3.f);
}

// GeluTanh, the twin of every fused epilogue with GELU's tanh form, against ONNX's formula in
// double (reference_formulas.h) on a dense sweep. The float32 argument z = sqrt(2/pi) (x +
// 0.044715 x^3) carries a few ulp of rounding, which exp(-2z) multiplies by |2z| (the
// function's own conditioning, far left): tolerance 4 ulp (2^-22) * (2 + |2z|) relative, plus
// 1e-37 absolute (results below float32's normal range).
TEST(Activation, GeluTanhAgainstDouble) {
  const Activation act{ActivationKind::kGeluTanh, 0.f, 0.f};
  double worst = 0.0;  // in units of the relative tolerance's 2^-22 (2 + |2z|) part
  for (int i = -16 * 256; i <= 16 * 256; ++i) {
    const float x = static_cast<float>(i) / 256.f;
    const double want = activation_ref(act, x);
    const double z = 0.7978845608028654 * (x + 0.044715 * double(x) * x * x);
    const double unit = std::ldexp(1.0, -22) * (2.0 + std::fabs(2.0 * z)) * std::fabs(want);
    const float got = cpu::apply_activation(act, x);
    ASSERT_LE(std::fabs(got - want), unit + 1e-37) << "x " << x << ": " << got << " vs " << want;
    if (std::fabs(want) > 1e-30) worst = std::max(worst, std::fabs(got - want) / unit);
    // The Unary op of float16 models computes the same bits on the host.
    ASSERT_EQ(got, unary_value(UnaryOp::kGeluTanh, x)) << "x " << x;
  }
  RecordProperty("worst_in_tolerance_units", std::to_string(worst));
  // ONNX's example (test_gelu_tanh_1): [-1, 0, 1] -> [-0.158808, 0, 0.841192].
  EXPECT_NEAR(cpu::apply_activation(act, -1.f), -0.158808f, 1e-6f);
  EXPECT_EQ(cpu::apply_activation(act, 0.f), 0.f);
  EXPECT_NEAR(cpu::apply_activation(act, 1.f), 0.841192f, 1e-6f);
  // The limits: -0 far left and at -inf (no -inf * 0 = NaN), x itself far right.
  for (float x : {-20.f, -1e10f, -1e30f, -INFINITY}) {
    const float y = cpu::apply_activation(act, x);
    EXPECT_EQ(y, 0.f) << x;
    EXPECT_TRUE(std::signbit(y)) << x;
  }
  EXPECT_EQ(cpu::apply_activation(act, 20.f), 20.f);
  EXPECT_EQ(cpu::apply_activation(act, 1e30f), 1e30f);
  EXPECT_EQ(cpu::apply_activation(act, INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(cpu::apply_activation(act, NAN)));
}

TEST(Activation, InPlace) {
  SEEDED_RNG(rng);
  const std::vector<float> x = rng.uniform(257, -6.f, 6.f);
  for (const Activation& act : kEveryActivation) {
    SCOPED_TRACE("activation kind " + std::to_string(int(act.kind)));
    std::vector<double> want;
    for (float v : x) want.push_back(activation_ref(act, v));
    Output buf(static_cast<int64_t>(x.size()));
    std::copy(x.begin(), x.end(), buf.data());
    cpu::activation({buf.size(), act}, buf.data(), buf.data());
    EXPECT_TRUE(all_close(buf, want, kActivationTol));
  }
}

}  // namespace
}  // namespace jetplan::kernels
