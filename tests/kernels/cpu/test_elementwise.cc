// The two-input elementwise kernel of kernels/kernels.h (integer arithmetic, Mod and
// FMod, comparisons on every dtype, logic on bool) against references written another way:
// integer arithmetic in 128 bits, reduced to the type afterwards; Mod from the identity
// ((a % b) + b) % b; comparisons from a three-way ordering of the values widened to long double
// (float16 decoded here with ldexp). Plus the ONNX specification's Mod examples and hand cases for
// truncating division, division by zero and overflow. Outputs are poisoned (0xA5 and then 0x5A)
// with a guard zone; the seed of any failure is printed (JETPLAN_TEST_SEED=<n> replays it).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/bfloat16_reference.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

ElementwiseParams elementwise_params(ElementwiseOp op, DType t, const Shape& as, const Shape& bs) {
  const Shape out = broadcast_shapes({as, bs});
  ElementwiseParams p;
  p.op = op;
  p.dtype = t;
  p.rank = int32_t(out.size());
  for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
  broadcast_strides(as, out, p.a_strides);
  broadcast_strides(bs, out, p.b_strides);
  return p;
}

// Operand shape pairs, used in both orders.
const std::pair<Shape, Shape> kShapes[] = {
    {{2, 3, 4}, {3, 1}},
    {{1}, {2, 3}},
    {{2, 1, 4}, {1, 3, 1}},
    {{5, 7}, {5, 7}},
    {{}, {}},
    {{3, 1, 5, 1, 2}, {4, 1, 3, 1}},
    {{2, 1, 2, 1, 2, 1, 2, 3}, {1, 2, 1, 2, 1, 2, 1, 3}},  // kMaxRank
};

// --------------------------------------------------------------------------- integer arithmetic

const ElementwiseOp kArithmeticOps[] = {
    ElementwiseOp::kAdd,       ElementwiseOp::kSub,        ElementwiseOp::kMul,
    ElementwiseOp::kDiv,       ElementwiseOp::kMod,        ElementwiseOp::kFMod,
    ElementwiseOp::kMax,       ElementwiseOp::kMin,        ElementwiseOp::kBitAnd,
    ElementwiseOp::kBitOr,     ElementwiseOp::kBitXor,     ElementwiseOp::kShiftLeft,
    ElementwiseOp::kShiftRight};

// The reference of every integer op on exact values (a, b of a `bits`-wide type, sign-extended
// into Int128 when signed): the result before reduce<T> takes its low bits. Shifts as ONNX
// BitShift defines them: b < 0 or b >= bits gives 0, or -1 shifting a negative a right; a right
// shift of a negative a rounds toward -infinity (arithmetic).
Int128 arithmetic_ref(ElementwiseOp op, Int128 a, Int128 b, int bits) {
  switch (op) {
    case ElementwiseOp::kAdd:
      return a + b;
    case ElementwiseOp::kSub:
      return a - b;
    case ElementwiseOp::kMul:  // modulo 2^128 (two uint64 overflow Int128), reduced later
      return static_cast<Int128>(static_cast<UInt128>(a) *
                                 static_cast<UInt128>(b));
    case ElementwiseOp::kDiv:
      return b == 0 ? 0 : a / b;
    case ElementwiseOp::kMod:
      return b == 0 ? 0 : ((a % b) + b) % b;
    case ElementwiseOp::kFMod:
      return b == 0 ? 0 : a % b;
    case ElementwiseOp::kMax:
      return a > b ? a : b;
    case ElementwiseOp::kMin:
      return a < b ? a : b;
    case ElementwiseOp::kBitAnd:
      return a & b;
    case ElementwiseOp::kBitOr:
      return a | b;
    case ElementwiseOp::kBitXor:
      return a ^ b;
    case ElementwiseOp::kShiftLeft:
      return b < 0 || b >= bits ? 0 : static_cast<Int128>(static_cast<UInt128>(a) << int(b));
    case ElementwiseOp::kShiftRight: {
      if (b < 0 || b >= bits) return a < 0 ? -1 : 0;
      Int128 q = a;
      for (int k = 0; k < int(b); ++k) q = (q - (q < 0 && q % 2 != 0 ? 1 : 0)) / 2;  // floor
      return q;
    }
    default:
      break;
  }
  ADD_FAILURE() << "op " << int(op) << " is not arithmetic";
  return 0;
}

// v modulo 2^bits of T, into T's range.
template <typename T>
T reduce(Int128 v) {
  const Int128 m = Int128{1} << (8 * sizeof(T));
  Int128 r = ((v % m) + m) % m;
  if (std::numeric_limits<T>::is_signed && r >= m / 2) r -= m;
  return static_cast<T>(r);
}

template <typename T>
std::vector<T> integers(test_util::SeededRng& rng, int64_t n) {
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const T special[] = {lo, hi, 0, 1, T(-1), T(lo + 1)};  // T(-1) is the max when unsigned
  std::vector<T> v;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t kind = rng.integer(0, 9);
    // Any value: the low bits of 64 random ones (every T is two's complement).
    v.push_back(kind < 5   ? T(rng.integer(std::numeric_limits<T>::is_signed ? -9 : 0, 9))
                : kind < 8 ? T(rng.bits64())
                           : special[rng.integer(0, 5)]);
  }
  return v;
}

template <typename T>
void check_integer_arithmetic(test_util::SeededRng& rng, DType t) {
  for (const auto& shapes : kShapes)
    for (const auto& [as, bs] : {shapes, std::pair{shapes.second, shapes.first}})
      for (ElementwiseOp op : kArithmeticOps) {
        SCOPED_TRACE("op " + std::to_string(int(op)) + " on " + std::to_string(sizeof(T)) +
                     "-byte ints, shapes " + shape_str(as) + " " + shape_str(bs));
        const std::vector<T> a = integers<T>(rng, volume(as)), b = integers<T>(rng, volume(bs));
        const Shape out = broadcast_shapes({as, bs});
        std::vector<T> want;
        for (int64_t i = 0; i < volume(out); ++i) {
          const Shape c = unravel(i, out);
          want.push_back(reduce<T>(arithmetic_ref(op, a[size_t(broadcast_index(c, as))],
                                                  b[size_t(broadcast_index(c, bs))],
                                                  int(8 * sizeof(T)))));
        }
        const ElementwiseParams p = elementwise_params(op, t, as, bs);
        expect_bytes(to_bytes(want), sizeof(T),
                     [&](unsigned char* y) { cpu::elementwise(p, a.data(), b.data(), y); });
      }
}

TEST(Elementwise, IntegerArithmeticOverBroadcastShapes) {
  SEEDED_RNG(rng);
  check_integer_arithmetic<int32_t>(rng, DType::kInt32);
  check_integer_arithmetic<int64_t>(rng, DType::kInt64);
  check_integer_arithmetic<int16_t>(rng, DType::kInt16);
  check_integer_arithmetic<uint16_t>(rng, DType::kUInt16);
  check_integer_arithmetic<uint32_t>(rng, DType::kUInt32);
  check_integer_arithmetic<uint64_t>(rng, DType::kUInt64);
}

template <typename T>
void expect_op(ElementwiseOp op, DType t, const std::vector<T>& a, const std::vector<T>& b,
               const std::vector<T>& want) {
  SCOPED_TRACE("op " + std::to_string(int(op)));
  const Shape s = {int64_t(a.size())};
  expect_bytes(to_bytes(want), sizeof(T), [&](unsigned char* y) {
    cpu::elementwise(elementwise_params(op, t, s, s), a.data(), b.data(), y);
  });
}

TEST(Elementwise, OnnxModExamplesAndHandIntegerCases) {
  // ONNX Mod examples: fmod=0 takes the divisor's sign, fmod=1 the dividend's.
  const std::vector<int64_t> a = {-4, 7, 5, 4, -7, 8}, b = {2, -3, 8, -2, 3, 5};
  expect_op<int64_t>(ElementwiseOp::kMod, DType::kInt64, a, b, {0, -2, 5, 0, 2, 3});
  expect_op<int64_t>(ElementwiseOp::kFMod, DType::kInt64, a, b, {0, 1, 5, 0, -1, 3});
  const std::vector<int32_t> a32(a.begin(), a.end()), b32(b.begin(), b.end());
  expect_op<int32_t>(ElementwiseOp::kMod, DType::kInt32, a32, b32, {0, -2, 5, 0, 2, 3});
  expect_op<int32_t>(ElementwiseOp::kFMod, DType::kInt32, a32, b32, {0, 1, 5, 0, -1, 3});

  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  // Division truncates toward zero; by zero gives 0; min / -1 wraps to min.
  expect_op<int32_t>(ElementwiseOp::kDiv, DType::kInt32, {-7, 7, -7, 5, lo, lo, 0},
                     {2, -2, -2, 0, -1, 1, -3}, {-3, -3, 3, 0, lo, lo, 0});
  expect_op<int32_t>(ElementwiseOp::kMod, DType::kInt32, {5, lo, -7, lo}, {0, -1, 7, 3},
                     {0, 0, 0, 1});
  expect_op<int32_t>(ElementwiseOp::kFMod, DType::kInt32, {5, lo, lo}, {0, -1, 3}, {0, 0, -2});
  // Overflow wraps.
  expect_op<int32_t>(ElementwiseOp::kAdd, DType::kInt32, {hi, lo}, {1, -1}, {lo, hi});
  expect_op<int32_t>(ElementwiseOp::kSub, DType::kInt32, {lo}, {1}, {hi});
  expect_op<int32_t>(ElementwiseOp::kMul, DType::kInt32, {65536, lo}, {65536, -1}, {0, lo});
  const int64_t lo64 = std::numeric_limits<int64_t>::min();
  expect_op<int64_t>(ElementwiseOp::kDiv, DType::kInt64, {lo64, -9}, {-1, 4}, {lo64, -2});
  expect_op<int64_t>(ElementwiseOp::kMax, DType::kInt64, {lo64, -9}, {-1, -10}, {-1, -9});
  expect_op<int64_t>(ElementwiseOp::kMin, DType::kInt64, {lo64, -9}, {-1, -10}, {lo64, -10});
}

TEST(Elementwise, OnnxUnsignedAndInt16Cases) {
  // The ONNX node tests' values (test_mod_uint*, test_max_uint*, test_mod_mixed_sign_int16),
  // and the largest values, which a signed reading would get wrong.
  expect_op<uint16_t>(ElementwiseOp::kMod, DType::kUInt16, {4, 7, 5}, {2, 3, 8}, {0, 1, 5});
  expect_op<uint32_t>(ElementwiseOp::kMod, DType::kUInt32, {4, 7, 0xffffffffu}, {2, 3, 0xfffffffeu},
                      {0, 1, 1});
  expect_op<uint64_t>(ElementwiseOp::kMax, DType::kUInt64, {3, 2, ~uint64_t{0}}, {1, 4, 4},
                      {3, 4, ~uint64_t{0}});
  expect_op<uint64_t>(ElementwiseOp::kMin, DType::kUInt64, {3, 2, ~uint64_t{0}}, {1, 4, 4},
                      {1, 2, 4});
  expect_op<uint64_t>(ElementwiseOp::kDiv, DType::kUInt64, {~uint64_t{0}, 7}, {~uint64_t{0}, 0},
                      {1, 0});
  expect_op<int16_t>(ElementwiseOp::kMod, DType::kInt16, {-4, 7, 5, 4, -7, 8},
                     {2, -3, 8, -2, 3, 5}, {0, -2, 5, 0, 2, 3});
  expect_op<int16_t>(ElementwiseOp::kMul, DType::kInt16, {256, -32768}, {256, -1}, {0, -32768});
  expect_op<uint16_t>(ElementwiseOp::kMul, DType::kUInt16, {65535}, {65535}, {1});
}

TEST(Elementwise, FloatFMod) {
  // The ONNX fmod=1 float example, compared against numpy.fmod's float32 results.
  const std::vector<float> a = {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f},
                           b = {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f};
  const std::vector<float> want = {-0.10000038f, 0.39999962f, 5.f, 0.10000038f, -0.39999962f, 3.f};
  expect_op<float>(ElementwiseOp::kFMod, DType::kFloat32, a, b, want);
  const std::vector<double> a64(a.begin(), a.end()), b64(b.begin(), b.end());
  std::vector<double> want64;
  for (size_t i = 0; i < a.size(); ++i) want64.push_back(std::fmod(a64[i], b64[i]));
  expect_op<double>(ElementwiseOp::kFMod, DType::kFloat64, a64, b64, want64);
  // IEEE: x fmod 0 and inf fmod x are NaN; x fmod inf is x; the sign of a zero result is x's.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1.f, inf, 3.f, -4.f}, y = {0.f, 2.f, inf, 2.f};
  const Shape s = {4};
  for (unsigned char poison : test_util::kBytePoisons) {
    test_util::ByteOutput out(16, poison);
    cpu::elementwise(elementwise_params(ElementwiseOp::kFMod, DType::kFloat32, s, s), x.data(),
                     y.data(), out.data());
    EXPECT_TRUE(out.guard_intact());
    const float* got = reinterpret_cast<const float*>(out.data());
    EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]));
    EXPECT_EQ(got[2], 3.f);
    EXPECT_TRUE(got[3] == 0.f && std::signbit(got[3]));
  }
}

// -------------------------------------------------------------------------- compare and logic

const ElementwiseOp kCompareOps[] = {ElementwiseOp::kEqual, ElementwiseOp::kLess,
                                     ElementwiseOp::kLessOrEqual, ElementwiseOp::kGreater,
                                     ElementwiseOp::kGreaterOrEqual};
const ElementwiseOp kLogicOps[] = {ElementwiseOp::kAnd, ElementwiseOp::kOr, ElementwiseOp::kXor};
const ElementwiseOp kFloat64OnlyOps[] = {ElementwiseOp::kPow};
static_assert(sizeof kArithmeticOps + sizeof kCompareOps + sizeof kLogicOps +
                      sizeof kFloat64OnlyOps ==
                  kElementwiseOpCount * sizeof(ElementwiseOp),
              "a new ElementwiseOp needs a place in one of the op lists and a reference");

// Element i of a tensor of dtype t, exactly, or NaN.
long double value_of(DType t, const Bytes& v, int64_t i) {
  const unsigned char* p = v.data() + i * dtype_bytes(t);
  switch (t) {
    case DType::kFloat32:
      return test_util::load<float>(p);
    case DType::kFloat64:
      return test_util::load<double>(p);
    case DType::kBool:
      return test_util::load<uint8_t>(p);
    case DType::kBFloat16:  // no Elementwise op takes it
      return NAN;
    case DType::kFloat16:
      return test_util::ieee_value(test_util::load<uint16_t>(p), 5, 10);
    default:  // an integer; long double has 64 mantissa bits: exact
      return test_util::with_integer_type(t, [p](auto zero) -> long double {
        return test_util::load<decltype(zero)>(p);
      });
  }
}

bool compare_ref(ElementwiseOp op, long double a, long double b) {
  // -1, 0, 1, or 2 for unordered (a NaN on either side): every comparison is false then.
  const int order = std::isnan(a) || std::isnan(b) ? 2 : (a < b ? -1 : (b < a ? 1 : 0));
  switch (op) {
    case ElementwiseOp::kEqual:
      return order == 0;
    case ElementwiseOp::kLess:
      return order == -1;
    case ElementwiseOp::kLessOrEqual:
      return order == -1 || order == 0;
    case ElementwiseOp::kGreater:
      return order == 1;
    case ElementwiseOp::kGreaterOrEqual:
      return order == 1 || order == 0;
    case ElementwiseOp::kAnd:
      return a != 0 && b != 0;
    case ElementwiseOp::kOr:
      return !(a == 0 && b == 0);
    case ElementwiseOp::kXor:
      return (a == 0) == !(b == 0);
    default:
      break;
  }
  ADD_FAILURE() << "op " << int(op) << " gives no bool";
  return false;
}

// Values of dtype t drawn from a small pool, so that equal pairs are common; the pool holds the
// extremes, zeros of both signs, infinities and NaNs where the dtype has them.
Bytes pooled_values(test_util::SeededRng& rng, DType t, int64_t n) {
  std::vector<Bytes> pool;
  auto add = [&](auto v) { pool.push_back(to_bytes(std::vector<decltype(v)>{v})); };
  switch (t) {
    case DType::kFloat32:
      for (float v : {0.f, -0.f, 1.f, -1.5f, 2.f, INFINITY, -INFINITY, NAN, 1e-40f, 3e38f}) add(v);
      break;
    case DType::kFloat64:
      for (double v : {0.0, -0.0, 1.0, -1.5, 1.0 + 1e-15, double(INFINITY), -double(INFINITY),
                       double(NAN), 1e300})
        add(v);
      break;
    case DType::kFloat16:  // 0, -0, 1, -1.5, 65504, inf, -inf, NaN, smallest subnormal, -2
      for (uint16_t v :
           {0x0000, 0x8000, 0x3c00, 0xbe00, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0xc000})
        add(v);
      break;
    case DType::kInt8:
      for (int8_t v : {-128, -1, 0, 1, 5, 127}) add(v);
      break;
    case DType::kUInt8:
      for (uint8_t v : {0, 1, 5, 128, 255}) add(v);
      break;
    case DType::kBool:
      for (uint8_t v : {0, 1}) add(v);
      break;
    case DType::kInt32:
      for (int32_t v : {std::numeric_limits<int32_t>::min(), -1, 0, 1, 5, 16777217,
                        std::numeric_limits<int32_t>::max()})
        add(v);
      break;
    case DType::kInt64:  // neighbours that a double could not tell apart
      for (int64_t v :
           {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{0}, int64_t{9007199254740992},
            int64_t{9007199254740993}, std::numeric_limits<int64_t>::max()})
        add(v);
      break;
    case DType::kInt16:
      for (int16_t v : {-32768, -1, 0, 1, 5, 32767}) add(v);
      break;
    case DType::kUInt16:
      for (uint16_t v : {0, 1, 5, 32768, 65535}) add(v);
      break;
    case DType::kUInt32:
      for (uint32_t v : {0u, 1u, 5u, 0x80000000u, 0xffffffffu}) add(v);
      break;
    case DType::kUInt64:  // past INT64_MAX, and neighbours a double could not tell apart
      for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 63, (uint64_t{1} << 63) + 1,
                         ~uint64_t{0}, ~uint64_t{0} - 1})
        add(v);
      break;
    case DType::kBFloat16:  // no Elementwise op takes it
      ADD_FAILURE() << "no Elementwise op takes bfloat16";
      return {};
  }
  Bytes out;
  for (int64_t i = 0; i < n; ++i) {
    const Bytes& v = pool[size_t(rng.integer(0, int64_t(pool.size()) - 1))];
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

void check_bool_ops(test_util::SeededRng& rng, DType t, const ElementwiseOp* ops,
                    size_t num_ops) {
  for (const auto& shapes : kShapes)
    for (const auto& [as, bs] : {shapes, std::pair{shapes.second, shapes.first}})
      for (size_t k = 0; k < num_ops; ++k) {
        const ElementwiseOp op = ops[k];
        SCOPED_TRACE("op " + std::to_string(int(op)) + " dtype " + std::to_string(int(t)) +
                     " shapes " + shape_str(as) + " " + shape_str(bs));
        EXPECT_EQ(elementwise_out_dtype(op, t), DType::kBool);
        const Bytes a = pooled_values(rng, t, volume(as)), b = pooled_values(rng, t, volume(bs));
        const Shape out = broadcast_shapes({as, bs});
        Bytes want;
        for (int64_t i = 0; i < volume(out); ++i) {
          const Shape c = unravel(i, out);
          want.push_back(compare_ref(op, value_of(t, a, broadcast_index(c, as)),
                                     value_of(t, b, broadcast_index(c, bs))));
        }
        const ElementwiseParams p = elementwise_params(op, t, as, bs);
        expect_bytes(want, 1,
                     [&](unsigned char* y) { cpu::elementwise(p, a.data(), b.data(), y); });
      }
}

TEST(Elementwise, ComparisonsOnEveryDType) {
  SEEDED_RNG(rng);
  for (int t = 0; t < kDTypeCount; ++t) {
    // bfloat16 reaches Cast and data movement only (kernels/elementwise.h): no Elementwise op.
    if (DType(t) == DType::kBFloat16) continue;
    check_bool_ops(rng, DType(t), kCompareOps, 5);
  }
  for (int op = 0; op < kElementwiseOpCount; ++op)
    EXPECT_FALSE(elementwise_supported(ElementwiseOp(op), DType::kBFloat16)) << "op " << op;
}

TEST(Elementwise, LogicOnBool) {
  SEEDED_RNG(rng);
  check_bool_ops(rng, DType::kBool, kLogicOps, 3);
  // Every combination, by hand.
  const Bytes a = {0, 0, 1, 1}, b = {0, 1, 0, 1};
  const Shape s = {4};
  const Bytes want[] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}};
  for (size_t k = 0; k < 3; ++k)
    expect_bytes(want[k], 1, [&](unsigned char* y) {
      cpu::elementwise(elementwise_params(kLogicOps[k], DType::kBool, s, s), a.data(), b.data(), y);
    });
  // Any nonzero byte is true, and the output is always 0 or 1.
  const Bytes c = {0, 2, 0xff, 1}, d = {7, 1, 0xff, 0};
  const Bytes want_cd[] = {{0, 1, 1, 0}, {1, 1, 1, 1}, {1, 0, 0, 1}};
  for (size_t k = 0; k < 3; ++k)
    expect_bytes(want_cd[k], 1, [&](unsigned char* y) {
      cpu::elementwise(elementwise_params(kLogicOps[k], DType::kBool, s, s), c.data(), d.data(), y);
    });
}

TEST(Elementwise, HandComparisonsWithNaNAndSignedZero) {
  const std::vector<float> a = {NAN, NAN, 0.f, 1.f, -INFINITY}, b = {NAN, 1.f, -0.f, 1.f, 1.f};
  const Shape s = {5};
  const Bytes want[] = {
      {0, 0, 1, 1, 0}, {0, 0, 0, 0, 1}, {0, 0, 1, 1, 1}, {0, 0, 0, 0, 0}, {0, 0, 1, 1, 0}};
  for (size_t k = 0; k < 5; ++k)
    expect_bytes(want[k], 1, [&](unsigned char* y) {
      cpu::elementwise(elementwise_params(kCompareOps[k], DType::kFloat32, s, s), a.data(),
                       b.data(), y);
    });
}

// Float64 arithmetic against the same expressions in double, per element, over broadcast shapes
// and the IEEE specials (NaN propagates through Max and Min from either side, as the float32
// Binary kernel's do).
TEST(Elementwise, Float64ArithmeticAndPowOverBroadcastShapes) {
  SEEDED_RNG(rng);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, nan, inf, -inf, 1e-310, 3.0};
  const ElementwiseOp ops[] = {ElementwiseOp::kAdd, ElementwiseOp::kSub,  ElementwiseOp::kMul,
                               ElementwiseOp::kDiv, ElementwiseOp::kFMod, ElementwiseOp::kMax,
                               ElementwiseOp::kMin, ElementwiseOp::kPow};
  const auto ref = [](ElementwiseOp op, double a, double b) {
    switch (op) {
      case ElementwiseOp::kAdd: return a + b;
      case ElementwiseOp::kSub: return a - b;
      case ElementwiseOp::kMul: return a * b;
      case ElementwiseOp::kDiv: return a / b;
      case ElementwiseOp::kFMod: return std::fmod(a, b);
      case ElementwiseOp::kMax: return std::isnan(a) || std::isnan(b) ? a + b : std::fmax(a, b);
      case ElementwiseOp::kMin: return std::isnan(a) || std::isnan(b) ? a + b : std::fmin(a, b);
      case ElementwiseOp::kPow: return std::pow(a, b);
      default: return 0.0;
    }
  };
  for (const auto& shapes : kShapes)
    for (ElementwiseOp op : ops) {
      const auto& [as, bs] = shapes;
      SCOPED_TRACE("op " + std::to_string(int(op)) + ", shapes " + shape_str(as) + " " +
                   shape_str(bs));
      ASSERT_TRUE(elementwise_supported(op, DType::kFloat64));
      std::vector<double> a, b;
      for (int64_t i = 0; i < volume(as); ++i)
        a.push_back(rng.integer(0, 3) == 0 ? special[rng.integer(0, 9)] : double(rng.uniform(-4.f, 4.f)));
      for (int64_t i = 0; i < volume(bs); ++i)
        b.push_back(rng.integer(0, 3) == 0 ? special[rng.integer(0, 9)] : double(rng.uniform(-4.f, 4.f)));
      const Shape out = broadcast_shapes({as, bs});
      std::vector<double> got(size_t(volume(out)), -12345.0);
      cpu::elementwise(elementwise_params(op, DType::kFloat64, as, bs), a.data(), b.data(),
                       got.data());
      for (int64_t i = 0; i < volume(out); ++i) {
        const Shape c = unravel(i, out);
        const double x = a[size_t(broadcast_index(c, as))], y = b[size_t(broadcast_index(c, bs))];
        const double want = ref(op, x, y);
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(got[size_t(i)])) << x << " " << y;
        else
          EXPECT_EQ(got[size_t(i)], want) << x << " " << y;
      }
    }
  EXPECT_FALSE(elementwise_supported(ElementwiseOp::kPow, DType::kFloat32));
  EXPECT_FALSE(elementwise_supported(ElementwiseOp::kPow, DType::kInt64));
  EXPECT_FALSE(elementwise_supported(ElementwiseOp::kMod, DType::kFloat64));
}

TEST(Elementwise, SupportTableAndUnsupportedPairsWriteNothing) {
  EXPECT_TRUE(elementwise_supported(ElementwiseOp::kMod, DType::kInt64));
  EXPECT_TRUE(elementwise_supported(ElementwiseOp::kFMod, DType::kFloat32));
  EXPECT_TRUE(elementwise_supported(ElementwiseOp::kLess, DType::kFloat16));
  EXPECT_FALSE(elementwise_supported(ElementwiseOp::kAdd, DType::kFloat32));  // BinaryParams
  EXPECT_FALSE(elementwise_supported(ElementwiseOp::kMod, DType::kFloat32));  // ONNX: fmod=1
  EXPECT_FALSE(elementwise_supported(ElementwiseOp::kAnd, DType::kInt32));
  EXPECT_EQ(elementwise_out_dtype(ElementwiseOp::kMul, DType::kInt64), DType::kInt64);
  const std::vector<int32_t> a = {1, 2};
  const Shape s = {2};
  for (unsigned char poison : test_util::kBytePoisons) {
    test_util::ByteOutput y(8, poison);
    cpu::elementwise(elementwise_params(ElementwiseOp::kAnd, DType::kInt32, s, s), a.data(),
                     a.data(), y.data());
    cpu::elementwise(elementwise_params(ElementwiseOp::kAdd, DType::kFloat32, s, s), a.data(),
                     a.data(), y.data());
    EXPECT_TRUE(y.equals(Bytes(8, poison)));
  }
}

}  // namespace
}  // namespace jetplan::kernels
