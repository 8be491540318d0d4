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
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ----------------------------------------------------------------------------------- binary

const BinaryOp kEveryBinaryOp[] = {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul,
                                   BinaryOp::kDiv, BinaryOp::kMax, BinaryOp::kMin,
                                   BinaryOp::kPow, BinaryOp::kPRelu};
static_assert(sizeof kEveryBinaryOp / sizeof kEveryBinaryOp[0] == kBinaryOpCount,
              "a new BinaryOp needs an entry here and in binary_ref");

// numpy broadcasting, the shapes aligned at their last dim.
Shape broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = std::max(da, db);
  }
  return out;
}

BinaryParams binary_params(BinaryOp op, const Shape& a, const Shape& b, Activation act) {
  const Shape out = broadcast(a, b);
  BinaryParams p;
  p.op = op;
  p.rank = static_cast<int32_t>(out.size());
  for (size_t i = 0; i < out.size(); ++i) p.out_dims[i] = out[i];
  broadcast_strides(a, out, p.a_strides);
  broadcast_strides(b, out, p.b_strides);
  p.act = act;
  return p;
}

// Element of dense `shape` that output coordinate `c` reads: each coordinate taken modulo the
// operand's dim (a dim of 1 always gives 0), the shape aligned at its last dim. Not the numpy
// rule of kernel_test_util.h's broadcast_index: a second route to the same element.
int64_t modulo_broadcast_index(const Shape& c, const Shape& shape) {
  const size_t lead = c.size() - shape.size();
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + c[lead + d] % shape[d];
  return i;
}

std::vector<double> binary_reference(BinaryOp op, const Shape& as, const std::vector<float>& a,
                                     const Shape& bs, const std::vector<float>& b,
                                     Activation act) {
  const Shape out = broadcast(as, bs);
  std::vector<double> y;
  for (int64_t i = 0; i < volume(out); ++i) {
    const Shape c = unravel(i, out);
    const double v = binary_ref(op, a[size_t(modulo_broadcast_index(c, as))],
                                b[size_t(modulo_broadcast_index(c, bs))]);
    y.push_back(activation_ref(act, v));
  }
  return y;
}

// Operands in the ranges where every op is finite and well conditioned.
void binary_inputs(SeededRng& rng, BinaryOp op, int64_t na, int64_t nb, std::vector<float>& a,
                   std::vector<float>& b) {
  a = op == BinaryOp::kPow ? rng.uniform(na, 0.5f, 2.f) : rng.uniform(na, -2.f, 2.f);
  b = op == BinaryOp::kDiv ? rng.signed_magnitude(nb, 0.5f, 2.f) : rng.uniform(nb, -2.f, 2.f);
}

constexpr Tolerance kBinaryTol{1e-6, 1e-6};

TEST(Binary, HandBroadcasts) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, row = {10, 20, 30};
  Output y(6);
  cpu::binary(binary_params(BinaryOp::kAdd, {2, 3}, {3}, {}), a.data(), row.data(), y.data());
  EXPECT_TRUE(all_close(y, {11, 22, 33, 14, 25, 36}, kExact));

  const std::vector<float> col = {1, 2};
  Output z(6);
  cpu::binary(binary_params(BinaryOp::kSub, {2, 1}, {1, 3}, {}), col.data(), row.data(),
              z.data());
  EXPECT_TRUE(all_close(z, {-9, -19, -29, -8, -18, -28}, kExact));

  const std::vector<float> s = {2};
  Output w(6);
  cpu::binary(binary_params(BinaryOp::kPow, {2, 3}, {1}, {ActivationKind::kClip, 0.f, 20.f}),
              a.data(), s.data(), w.data());
  EXPECT_TRUE(all_close(w, {1, 4, 9, 16, 20, 20}, kExact));
}

TEST(Binary, PReluHandValues) {
  // x [2, 3] with a slope per column [3]: negatives scaled, zero and positives kept.
  const std::vector<float> x = {-2, 0, 3, -1, -4, 0.5f}, slope = {0.5f, -1, 2};
  Output y(6);
  cpu::binary(binary_params(BinaryOp::kPRelu, {2, 3}, {3}, {}), x.data(), slope.data(),
              y.data());
  EXPECT_TRUE(all_close(y, {-1, 0, 3, -0.5, 4, 0.5}, kExact));
}

struct BinaryShapes {
  Shape a, b;
};

TEST(Binary, EveryOpOverBroadcastShapes) {
  SEEDED_RNG(rng);
  const BinaryShapes cases[] = {
      {{2, 3, 4}, {3, 1}},
      {{1}, {2, 3}},
      {{2, 3}, {1}},
      {{2, 1, 4}, {1, 3, 1}},
      {{4, 5}, {4, 5}},
      {{}, {}},
      {{3, 1, 5, 1, 2}, {4, 1, 3, 1}},
      {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 2, 1, 2, 1, 2, 1, 3}},  // kMaxRank
  };
  for (const BinaryShapes& s : cases) {
    // Both operand orders: catches an op applied backwards or a broadcast that works one way.
    for (const auto& [sa, sb] : {std::pair{s.a, s.b}, std::pair{s.b, s.a}}) {
      for (BinaryOp op : kEveryBinaryOp) {
        SCOPED_TRACE("op " + std::to_string(int(op)) + " shapes of rank " +
                     std::to_string(sa.size()) + " and " + std::to_string(sb.size()));
        std::vector<float> a, b;
        binary_inputs(rng, op, volume(sa), volume(sb), a, b);
        Output y(volume(broadcast(sa, sb)));
        cpu::binary(binary_params(op, sa, sb, {}), a.data(), b.data(), y.data());
        EXPECT_TRUE(all_close(y, binary_reference(op, sa, a, sb, b, {}), kBinaryTol));
      }
    }
  }
}

TEST(Binary, FusedActivation) {
  SEEDED_RNG(rng);
  const Shape as = {3, 4, 5}, bs = {4, 1};
  const std::pair<BinaryOp, Activation> cases[] = {
      {BinaryOp::kSub, {ActivationKind::kRelu, 0.f, 0.f}},
      {BinaryOp::kMul, {ActivationKind::kLeakyRelu, 0.1f, 0.f}},
      {BinaryOp::kAdd, {ActivationKind::kSigmoid, 0.f, 0.f}},
      {BinaryOp::kMax, {ActivationKind::kClip, -0.5f, 0.5f}},
  };
  for (const auto& [op, act] : cases) {
    SCOPED_TRACE("op " + std::to_string(int(op)) + " act " + std::to_string(int(act.kind)));
    std::vector<float> a, b;
    binary_inputs(rng, op, volume(as), volume(bs), a, b);
    Output y(volume(as));
    cpu::binary(binary_params(op, as, bs, act), a.data(), b.data(), y.data());
    EXPECT_TRUE(all_close(y, binary_reference(op, as, a, bs, b, act), kBinaryTol));
  }
}

TEST(Binary, StridedOperandReadsATransposedView) {
  SEEDED_RNG(rng);
  // a is stored [4, 3] and read as its transpose [3, 4]; b is dense [3, 4].
  const std::vector<float> a = rng.uniform(12, -2.f, 2.f), b = rng.uniform(12, -2.f, 2.f);
  BinaryParams p;
  p.op = BinaryOp::kSub;
  p.rank = 2;
  set_dims(p.out_dims, {3, 4});
  set_dims(p.a_strides, {1, 3});
  set_dims(p.b_strides, {4, 1});
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) want.push_back(double{a[size_t(j * 3 + i)]} - b[size_t(i * 4 + j)]);
  Output y(12);
  cpu::binary(p, a.data(), b.data(), y.data());
  EXPECT_TRUE(all_close(y, want, kBinaryTol));
}

// ----------------------------------------------------------------- ONNX node test data

// PRelu and Selu on ONNX's stored data. The attributes are in the models, not the data:
// test_selu has alpha 2 and gamma 3, test_selu_default ONNX's defaults.
TEST(OnnxNodeData, PReluAndSelu) {
  if (!have_node_test("test_prelu_broadcast"))
    GTEST_SKIP() << "no ONNX node test data in " << node_data_dir();
  const Tolerance tol{1e-6, 1e-6};
  for (const char* test : {"test_prelu_broadcast", "test_prelu_example"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 3u);  // x, slope, y
    const std::vector<float> x = values<float>(t[0], kOnnxFloat);
    const std::vector<float> slope = values<float>(t[1], kOnnxFloat);
    const std::vector<float> want = values<float>(t[2], kOnnxFloat);
    Output y(element_count(t[2]));
    cpu::binary(binary_params(BinaryOp::kPRelu, t[0].dims, t[1].dims, {}), x.data(),
                slope.data(), y.data());
    EXPECT_TRUE(all_close(y, std::vector<double>(want.begin(), want.end()), tol));
  }
  const std::pair<const char*, Activation> selu[] = {
      {"test_selu", {ActivationKind::kSelu, 2.f, 3.f}},
      {"test_selu_example", {ActivationKind::kSelu, 2.f, 3.f}},
      {"test_selu_default", {ActivationKind::kSelu, 1.67326319217681884765625f,
                             1.05070102214813232421875f}}};
  for (const auto& [test, act] : selu) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 2u);
    const std::vector<float> x = values<float>(t[0], kOnnxFloat);
    const std::vector<float> want = values<float>(t[1], kOnnxFloat);
    Output y(element_count(t[1]));
    cpu::activation({element_count(t[0]), act}, x.data(), y.data());
    EXPECT_TRUE(all_close(y, std::vector<double>(want.begin(), want.end()), tol));
  }
}

// An INT8 output `got` (element i) against real value v in double: the piecewise-linear
// activation, times the inverse scale, rounded half to even and saturated; within half a unit
// (plus 1e-3) only where the scaled value lies within 1e-3 of a tie (counted in *ties).
void expect_quantized(double v, const Activation& act, float inv_scale, int8_t got, int64_t i,
                      size_t* ties) {
  if (act.kind == ActivationKind::kRelu) v = std::max(v, 0.0);
  if (act.kind == ActivationKind::kClip) v = std::min(std::max(v, double(act.alpha)), double(act.beta));
  if (act.kind == ActivationKind::kLeakyRelu && v < 0) v *= double(act.alpha);
  const double q = v * double(inv_scale);
  if (std::fabs(std::fabs(q - std::floor(q)) - 0.5) < 1e-3 && std::fabs(q) < 127) {
    ++*ties;
    ASSERT_LE(std::fabs(double(got) - q), 0.5 + 1e-3) << i;
  } else {
    ASSERT_EQ(double(got), std::min(127.0, std::max(-128.0, std::nearbyint(q))))
        << "element " << i << " q " << q;
  }
}

// An INT8 plan's Add (cpu::binary_add_int8): against the same formula in double, with
// broadcasting and the piecewise-linear activations. The float arithmetic (one product, one
// fmaf, a multiply by the inverse scale) moves the value by ~1e-6 units, so the result is the
// double formula rounded half to even and saturated, but for a value within 1e-3 of a tie,
// where it may be either neighbour.
TEST(Binary, Int8AddMatchesTheDoubleFormula) {
  SEEDED_RNG(rng);
  struct Case { Shape a, b; };
  const Case cases[] = {{{2, 5, 7, 16}, {2, 5, 7, 16}}, {{1, 4, 4, 8}, {1, 1, 1, 8}}, {{3}, {1}}};
  const Activation acts[] = {{}, {ActivationKind::kRelu, 0, 0}, {ActivationKind::kClip, -1.f, 2.f},
                             {ActivationKind::kLeakyRelu, 0.1f, 0}};
  size_t ties = 0, checked = 0;
  for (const Case& c : cases)
    for (const Activation& act : acts) {
      const BinaryParams p = binary_params(BinaryOp::kAdd, c.a, c.b, act);
      const Shape out = broadcast(c.a, c.b);
      std::vector<int8_t> a(size_t(volume(c.a))), b(size_t(volume(c.b)));
      for (int8_t& v : a) v = int8_t(rng.integer(-128, 127));
      for (int8_t& v : b) v = int8_t(rng.integer(-128, 127));
      const float scales[3] = {rng.uniform(0.005f, 0.05f), rng.uniform(0.005f, 0.05f),
                               1.f / rng.uniform(0.01f, 0.05f)};
      std::vector<int8_t> y(size_t(volume(out)), int8_t{0x5a});
      cpu::binary_add_int8(p, a.data(), b.data(), scales, y.data());
      for (int64_t i = 0; i < volume(out); ++i) {
        const Shape co = unravel(i, out);
        const double v = double(a[size_t(modulo_broadcast_index(co, c.a))]) * scales[0] +
                         double(b[size_t(modulo_broadcast_index(co, c.b))]) * scales[1];
        ASSERT_NO_FATAL_FAILURE(expect_quantized(v, act, scales[2], y[size_t(i)], i, &ties));
        ++checked;
      }
    }
  // The exact comparison decides nearly every element (a clipped value repeats one q, which
  // may lie near a tie).
  EXPECT_LT(ties * 10, checked);
}

// An INT8 plan's float Binary into Int8 (cpu::binary_to_int8, a squeeze-excitation Mul in front
// of an INT8 conv): against the op and activation in double, rounded half to even and saturated,
// with broadcasting; within a unit only where the float product lands within 1e-3 of a tie.
TEST(Binary, FloatIntoInt8MatchesTheDoubleFormula) {
  SEEDED_RNG(rng);
  struct Case { Shape a, b; };
  const Case cases[] = {{{2, 5, 7, 16}, {2, 1, 1, 16}}, {{1, 4, 4, 8}, {1, 4, 4, 8}}, {{3}, {1}}};
  const Activation acts[] = {{}, {ActivationKind::kRelu, 0, 0}, {ActivationKind::kClip, -1.f, 2.f},
                             {ActivationKind::kLeakyRelu, 0.1f, 0}};
  size_t ties = 0, checked = 0;
  for (const Case& c : cases)
    for (BinaryOp op : {BinaryOp::kMul, BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMax})
      for (const Activation& act : acts) {
        const BinaryParams p = binary_params(op, c.a, c.b, act);
        const Shape out = broadcast(c.a, c.b);
        const std::vector<float> a = rng.uniform(volume(c.a), -3.f, 3.f);
        const std::vector<float> b = rng.uniform(volume(c.b), -1.f, 1.f);
        const float inv_y = 1.f / rng.uniform(0.01f, 0.05f);
        std::vector<int8_t> y(size_t(volume(out)), int8_t{0x5a});
        cpu::binary_to_int8(p, a.data(), b.data(), inv_y, y.data());
        for (int64_t i = 0; i < volume(out); ++i) {
          const Shape co = unravel(i, out);
          const double x0 = a[size_t(modulo_broadcast_index(co, c.a))];
          const double x1 = b[size_t(modulo_broadcast_index(co, c.b))];
          const double v = op == BinaryOp::kMul   ? x0 * x1
                           : op == BinaryOp::kAdd ? x0 + x1
                           : op == BinaryOp::kSub ? x0 - x1
                                                  : std::max(x0, x1);
          ASSERT_NO_FATAL_FAILURE(expect_quantized(v, act, inv_y, y[size_t(i)], i, &ties));
          ++checked;
        }
      }
  EXPECT_LT(ties * 10, checked);
  EXPECT_GT(checked, 1000u);
}

}  // namespace
}  // namespace jetplan::kernels
