// Unary math and the two-input elementwise kernel (integer arithmetic, Mod, comparisons, logic)
// of kernels/kernels.h against references written another way: unary formulas in double
// through other identities (sinh from exp, asinh from log, ceil from floor, round from
// std::nearbyint), integer arithmetic in 128 bits reduced to the type afterwards, comparisons
// from a three-way ordering of values widened to long double; plus the ONNX specification's
// examples and hand cases for rounding ties, Mod signs, division by zero and overflow. Outputs
// are poisoned (NaN for floats, 0xA5 and then 0x5A bytes otherwise) with a guard zone; the seed
// of any failure is printed (JETPLAN_TEST_SEED=<n> replays it).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ------------------------------------------------------------------------------ unary, float

double floor_ref(double x) {  // through integer truncation, for |x| < 2^62
  const double t = static_cast<double>(static_cast<int64_t>(x));
  return t > x ? t - 1 : t;
}
double softplus_ref(double x) { return std::log(1.0 + std::exp(x)); }

struct UnaryCase {
  UnaryOp op;
  float lo, hi;  // random inputs, where the op is finite and well conditioned
  double (*ref)(double);
  Tolerance tol;
};

constexpr Tolerance kMathTol{1e-5, 1e-6};
constexpr Tolerance kExactTol{0.0, 0.0};

// Every float -> float op, in enum order.
const UnaryCase kFloatOps[] = {
    {UnaryOp::kAbs, -10, 10, [](double x) { return x < 0 ? -x : x; }, kExactTol},
    {UnaryOp::kNeg, -10, 10, [](double x) { return 0.0 - x; }, kExactTol},
    {UnaryOp::kExp, -20, 20, [](double x) { return std::exp(x); }, kMathTol},
    {UnaryOp::kLog, 1e-3f, 100, [](double x) { return std::log(x); }, kMathTol},
    {UnaryOp::kSqrt, 0, 100, [](double x) { return std::sqrt(x); }, kMathTol},
    {UnaryOp::kReciprocal, 0.1f, 10, [](double x) { return 1.0 / x; }, kMathTol},
    {UnaryOp::kFloor, -10, 10, floor_ref, kExactTol},
    {UnaryOp::kCeil, -10, 10, [](double x) { return -floor_ref(-x); }, kExactTol},
    {UnaryOp::kRound, -10, 10, [](double x) { return std::nearbyint(x); }, kExactTol},
    {UnaryOp::kSin, -10, 10, [](double x) { return std::sin(x); }, kMathTol},
    {UnaryOp::kCos, -10, 10, [](double x) { return std::cos(x); }, kMathTol},
    {UnaryOp::kTan, -1.5f, 1.5f, [](double x) { return std::sin(x) / std::cos(x); }, kMathTol},
    {UnaryOp::kAsin, -1, 1, [](double x) { return std::atan2(x, std::sqrt(1 - x * x)); }, kMathTol},
    {UnaryOp::kAcos, -1, 1, [](double x) { return std::atan2(std::sqrt(1 - x * x), x); }, kMathTol},
    {UnaryOp::kAtan, -10, 10, [](double x) { return std::atan2(x, 1.0); }, kMathTol},
    {UnaryOp::kSinh, -10, 10, [](double x) { return (std::exp(x) - std::exp(-x)) / 2; }, kMathTol},
    {UnaryOp::kCosh, -10, 10, [](double x) { return (std::exp(x) + std::exp(-x)) / 2; }, kMathTol},
    {UnaryOp::kAsinh, -10, 10,
     [](double x) {
       const double m = std::log(std::fabs(x) + std::sqrt(x * x + 1));
       return x < 0 ? -m : m;
     },
     kMathTol},
    {UnaryOp::kAcosh, 1, 10, [](double x) { return std::log(x + std::sqrt(x * x - 1)); }, kMathTol},
    {UnaryOp::kAtanh, -0.95f, 0.95f, [](double x) { return 0.5 * std::log((1 + x) / (1 - x)); },
     kMathTol},
    {UnaryOp::kErf, -4, 4, [](double x) { return std::erf(x); }, kMathTol},
    {UnaryOp::kSign, -10, 10, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); },
     kExactTol},
    {UnaryOp::kSoftsign, -10, 10, [](double x) { return x / (1 + std::fabs(x)); }, kMathTol},
    {UnaryOp::kSoftplus, -20, 20, softplus_ref, kMathTol},
    {UnaryOp::kMish, -20, 20, [](double x) { return x * std::tanh(softplus_ref(x)); }, kMathTol},
    {UnaryOp::kGeluTanh, -8, 8,
     [](double x) {
       return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
     },
     kMathTol},
};
const UnaryOp kPredicateOps[] = {UnaryOp::kIsNaN, UnaryOp::kIsInf, UnaryOp::kIsPosInf,
                                 UnaryOp::kIsNegInf, UnaryOp::kNot};
static_assert(sizeof kFloatOps / sizeof kFloatOps[0] + sizeof kPredicateOps / sizeof(UnaryOp) ==
                  kUnaryOpCount,
              "a new UnaryOp needs an entry in kFloatOps or kPredicateOps");

TEST(Unary, TablesCoverEveryOpInOrder) {
  int next = 0;
  for (const UnaryCase& c : kFloatOps) EXPECT_EQ(int(c.op), next++);
  for (UnaryOp op : kPredicateOps) EXPECT_EQ(int(op), next++);
}

void run_float_unary(UnaryOp op, const std::vector<float>& x, Output& y) {
  cpu::unary({op, DType::kFloat32, int64_t(x.size())}, x.data(), y.data());
}

TEST(Unary, EveryFloatOpMatchesItsFormula) {
  SEEDED_RNG(rng);
  for (const UnaryCase& c : kFloatOps) {
    SCOPED_TRACE("unary op " + std::to_string(int(c.op)));
    std::vector<float> x = rng.uniform(300, c.lo, c.hi);
    x.push_back(c.lo);
    x.push_back(c.hi);
    // Exact ties for the rounding ops.
    for (float t : {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f})
      if (t >= c.lo && t <= c.hi) x.push_back(t);
    std::vector<double> want;
    for (float v : x) want.push_back(c.ref(v));
    Output y(int64_t(x.size()));
    run_float_unary(c.op, x, y);
    EXPECT_TRUE(test_util::all_close(y, want, c.tol, &x));
    // The single-value entry point applies the same formula.
    Output single(int64_t(x.size()));
    for (size_t i = 0; i < x.size(); ++i) single.data()[i] = cpu::apply_unary(c.op, x[i]);
    EXPECT_TRUE(test_util::all_close(single, want, c.tol, &x));
  }
}

// Hand values at the edges: infinities, zeros of either sign, ties, values outside the domain.
struct HandValue {
  UnaryOp op;
  float x;
  float want;  // NaN: any NaN the kernel writes (not the poison)
  bool negative_zero = false;
};

TEST(Unary, HandEdgeValues) {
  const HandValue cases[] = {
      {UnaryOp::kRound, 0.5f, 0.f},
      {UnaryOp::kRound, 1.5f, 2.f},
      {UnaryOp::kRound, 2.5f, 2.f},
      {UnaryOp::kRound, -0.5f, 0.f, true},
      {UnaryOp::kRound, -1.5f, -2.f},
      {UnaryOp::kRound, -2.5f, -2.f},
      {UnaryOp::kRound, 0.49999997f, 0.f},
      {UnaryOp::kRound, 2.5000002f, 3.f},
      {UnaryOp::kRound, 8388607.5f, 8388608.f},
      {UnaryOp::kRound, 8388606.5f, 8388606.f},
      {UnaryOp::kRound, 1e10f, 1e10f},
      {UnaryOp::kRound, -kInf, -kInf},
      {UnaryOp::kRound, kNaN, kNaN},
      {UnaryOp::kRound, -0.2f, 0.f, true},
      {UnaryOp::kFloor, -0.5f, -1.f},
      {UnaryOp::kCeil, -0.5f, 0.f, true},
      {UnaryOp::kFloor, kInf, kInf},
      {UnaryOp::kCeil, kNaN, kNaN},
      {UnaryOp::kExp, -kInf, 0.f},
      {UnaryOp::kExp, kInf, kInf},
      {UnaryOp::kExp, 100.f, kInf},
      {UnaryOp::kExp, kNaN, kNaN},
      {UnaryOp::kLog, 0.f, -kInf},
      {UnaryOp::kLog, -1.f, kNaN},
      {UnaryOp::kSqrt, -1.f, kNaN},
      {UnaryOp::kSqrt, -0.f, 0.f, true},
      {UnaryOp::kReciprocal, 0.f, kInf},
      {UnaryOp::kReciprocal, -0.f, -kInf},
      {UnaryOp::kAsin, 2.f, kNaN},
      {UnaryOp::kAcosh, 1.f, 0.f},
      {UnaryOp::kAcosh, 0.5f, kNaN},
      {UnaryOp::kAtanh, 1.f, kInf},
      {UnaryOp::kAtanh, -1.f, -kInf},
      {UnaryOp::kErf, kInf, 1.f},
      {UnaryOp::kErf, -kInf, -1.f},
      {UnaryOp::kSign, kNaN, kNaN},
      {UnaryOp::kSign, -0.f, 0.f},
      {UnaryOp::kSign, -kInf, -1.f},
      {UnaryOp::kSign, 1e-30f, 1.f},
      {UnaryOp::kAbs, -kInf, kInf},
      {UnaryOp::kNeg, 0.f, 0.f, true},
      {UnaryOp::kSoftplus, kInf, kInf},
      {UnaryOp::kSoftplus, -kInf, 0.f},
      {UnaryOp::kSoftplus, 100.f, 100.f},
      {UnaryOp::kSoftplus, 0.f, 0.69314718f},
      {UnaryOp::kMish, kInf, kInf},
      {UnaryOp::kMish, 0.f, 0.f},
      {UnaryOp::kGeluTanh, kInf, kInf},
      {UnaryOp::kGeluTanh, -kInf, 0.f, true},
      {UnaryOp::kGeluTanh, 1e20f, 1e20f},
      {UnaryOp::kGeluTanh, -1e20f, 0.f, true},
      {UnaryOp::kSoftsign, -3.f, -0.75f},
      {UnaryOp::kTan, kInf, kNaN},
      {UnaryOp::kCosh, 0.f, 1.f},
      {UnaryOp::kSoftsign, kInf, 1.f},
      {UnaryOp::kSoftsign, -kInf, -1.f},
      {UnaryOp::kMish, -kInf, 0.f, true},
      {UnaryOp::kMish, -200.f, 0.f, true},
      {UnaryOp::kSign, 0.f, 0.f},
      {UnaryOp::kGeluTanh, -0.f, 0.f, true},
  };
  for (const HandValue& c : cases) {
    SCOPED_TRACE("unary op " + std::to_string(int(c.op)) + " of " + std::to_string(c.x));
    Output y(1);
    run_float_unary(c.op, {c.x}, y);
    EXPECT_TRUE(y.guard_intact());
    if (std::isnan(c.want)) {
      EXPECT_TRUE(std::isnan(y[0]) && !test_util::is_poison(y[0])) << "got " << y[0];
    } else {
      EXPECT_TRUE(test_util::all_close(y, {double{c.want}}, {1e-6, 0}));
      if (c.want == 0.f) {
        EXPECT_EQ(std::signbit(y[0]), c.negative_zero) << "sign of zero";
      }
    }
  }
}

// ------------------------------------------------------------------------- unary, predicates

// Classified from the bits, not from <cmath>.
bool is_nan_bits(float f) {
  const uint32_t b = test_util::load<uint32_t>(reinterpret_cast<const unsigned char*>(&f));
  return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0;
}
bool is_inf_bits(float f, int sign) {  // sign: 0 either, 1 positive, -1 negative
  const uint32_t b = test_util::load<uint32_t>(reinterpret_cast<const unsigned char*>(&f));
  if ((b & 0x7fffffffu) != 0x7f800000u) return false;
  return sign == 0 || (sign > 0) == ((b >> 31) == 0);
}

TEST(Unary, PredicatesGiveBool) {
  const std::vector<float> x = {kNaN,
                                -kNaN,
                                kInf,
                                -kInf,
                                0.f,
                                -0.f,
                                1.f,
                                -1.f,
                                std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::lowest(),
                                std::numeric_limits<float>::denorm_min()};
  struct Pred {
    UnaryOp op;
    bool (*ref)(float);
  };
  const Pred preds[] = {
      {UnaryOp::kIsNaN, is_nan_bits},
      {UnaryOp::kIsInf, [](float f) { return is_inf_bits(f, 0); }},
      {UnaryOp::kIsPosInf, [](float f) { return is_inf_bits(f, 1); }},
      {UnaryOp::kIsNegInf, [](float f) { return is_inf_bits(f, -1); }},
  };
  for (const Pred& p : preds) {
    SCOPED_TRACE("unary op " + std::to_string(int(p.op)));
    EXPECT_EQ(unary_out_dtype(p.op, DType::kFloat32), DType::kBool);
    Bytes want;
    for (float v : x) want.push_back(p.ref(v) ? 1 : 0);
    expect_bytes(want, 1, [&](unsigned char* y) {
      cpu::unary({p.op, DType::kFloat32, int64_t(x.size())}, x.data(), y);
    });
  }
  const Bytes b = {0, 1, 1, 0, 0};
  expect_bytes({1, 0, 0, 1, 1}, 1, [&](unsigned char* y) {
    cpu::unary({UnaryOp::kNot, DType::kBool, 5}, b.data(), y);
  });
}

// ---------------------------------------------------------------------------- unary, integer

template <typename T>
void check_integer_unary(test_util::SeededRng& rng, DType t) {
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<T> x = {lo, T(lo + 1), T(-1), 0, 1, hi};
  for (int i = 0; i < 200; ++i)
    x.push_back(i % 2 ? T(rng.integer(-9, 9)) : T(rng.integer(int64_t{lo}, int64_t{hi})));
  // The most negative value has no positive counterpart: negation wraps back to it.
  auto neg = [&](T v) { return v == lo ? lo : T(-v); };
  for (UnaryOp op : {UnaryOp::kAbs, UnaryOp::kNeg, UnaryOp::kSign}) {
    SCOPED_TRACE("unary op " + std::to_string(int(op)) + " on " + std::to_string(sizeof(T)) +
                 "-byte ints");
    std::vector<T> want;
    for (T v : x) {
      if (op == UnaryOp::kAbs) want.push_back(v < 0 ? neg(v) : v);
      if (op == UnaryOp::kNeg) want.push_back(neg(v));
      if (op == UnaryOp::kSign) want.push_back(T(v > 0) - T(v < 0));
    }
    expect_bytes(to_bytes(want), sizeof(T), [&](unsigned char* y) {
      cpu::unary({op, t, int64_t(x.size())}, x.data(), y);
    });
  }
}

TEST(Unary, IntegerAbsNegSign) {
  SEEDED_RNG(rng);
  check_integer_unary<int32_t>(rng, DType::kInt32);
  check_integer_unary<int64_t>(rng, DType::kInt64);
}

TEST(Unary, SupportTableAndUnsupportedPairsWriteNothing) {
  EXPECT_TRUE(unary_supported(UnaryOp::kMish, DType::kFloat32));
  EXPECT_TRUE(unary_supported(UnaryOp::kSign, DType::kInt64));
  EXPECT_TRUE(unary_supported(UnaryOp::kNot, DType::kBool));
  EXPECT_FALSE(unary_supported(UnaryOp::kNot, DType::kFloat32));
  EXPECT_FALSE(unary_supported(UnaryOp::kExp, DType::kInt32));
  EXPECT_FALSE(unary_supported(UnaryOp::kAbs, DType::kFloat16));
  EXPECT_EQ(unary_out_dtype(UnaryOp::kAbs, DType::kInt32), DType::kInt32);
  const std::vector<int32_t> x = {1, 2};
  for (unsigned char poison : test_util::kBytePoisons) {
    test_util::ByteOutput y(8, poison);
    cpu::unary({UnaryOp::kExp, DType::kInt32, 2}, x.data(), y.data());
    cpu::unary({UnaryOp::kNot, DType::kFloat32, 2}, x.data(), y.data());
    EXPECT_TRUE(y.equals(Bytes(8, poison)));
  }
}

}  // namespace
}  // namespace jetplan::kernels
