// cpu::reduce against a reference written differently: each output filters the whole input for
// the elements whose kept coordinates match it, then applies the ONNX formula in long double;
// plus ONNX operator examples and hand cases for NaN, infinities and empty reductions.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

constexpr double kInf = std::numeric_limits<double>::infinity();

// ------------------------------------------------------------------------------------ Reduce

const ReduceOp kEveryReduceOp[] = {ReduceOp::kSum,  ReduceOp::kMean,      ReduceOp::kMax,
                                   ReduceOp::kMin,  ReduceOp::kProd,      ReduceOp::kL1,
                                   ReduceOp::kL2,   ReduceOp::kSumSquare, ReduceOp::kLogSum,
                                   ReduceOp::kLogSumExp};
static_assert(sizeof kEveryReduceOp / sizeof kEveryReduceOp[0] == kReduceOpCount,
              "a new ReduceOp needs an entry here and in reduced()");

ReduceParams reduce_params(ReduceOp op, const Shape& in, uint32_t mask) {
  ReduceParams p;
  p.op = op;
  p.rank = static_cast<int32_t>(in.size());
  for (size_t d = 0; d < in.size(); ++d) p.in_dims[d] = in[d];
  p.axis_mask = mask;
  return p;
}

Shape reduced_shape(const Shape& in, uint32_t mask) {
  Shape out = in;
  for (size_t d = 0; d < in.size(); ++d)
    if (mask >> d & 1u) out[d] = 1;
  return out;
}

// Every output collects the input elements whose coordinates agree with it on every kept dim,
// then applies the ONNX formula to that list (long double; LogSumExp naive, so the inputs of the
// random tests stay small).
// The input elements that output `oc` (a coordinate of the reduced shape) collects: those whose
// coordinates agree with it on every kept dim, in input order.
template <typename T>
std::vector<long double> collected(const Shape& in, uint32_t mask, const Shape& oc,
                                   const std::vector<T>& x) {
  std::vector<long double> v;
  for (int64_t i = 0; i < volume(in); ++i) {
    const Shape ic = unravel(i, in);
    bool match = true;
    for (size_t d = 0; d < in.size(); ++d)
      if (!(mask >> d & 1u) && ic[d] != oc[d]) match = false;
    if (match) v.push_back(x[size_t(i)]);
  }
  return v;
}

// op over the values v, in long double.
long double reduced(ReduceOp op, const std::vector<long double>& v) {
  long double r = 0;
  switch (op) {
    case ReduceOp::kSum: for (auto e : v) r += e; break;
    case ReduceOp::kMean: for (auto e : v) r += e; r /= v.size(); break;
    case ReduceOp::kMax: r = *std::max_element(v.begin(), v.end()); break;
    case ReduceOp::kMin: r = *std::min_element(v.begin(), v.end()); break;
    case ReduceOp::kProd: r = 1; for (auto e : v) r *= e; break;
    case ReduceOp::kL1: for (auto e : v) r += std::fabs(e); break;
    case ReduceOp::kL2: for (auto e : v) r += e * e; r = std::sqrt(r); break;
    case ReduceOp::kSumSquare: for (auto e : v) r += e * e; break;
    case ReduceOp::kLogSum: for (auto e : v) r += e; r = std::log(r); break;
    case ReduceOp::kLogSumExp: for (auto e : v) r += std::exp(e); r = std::log(r); break;
  }
  return r;
}

std::vector<double> reduce_reference(ReduceOp op, const Shape& in, uint32_t mask,
                                     const std::vector<float>& x) {
  const Shape out = reduced_shape(in, mask);
  std::vector<double> y;
  for (int64_t o = 0; o < volume(out); ++o)
    y.push_back(double(reduced(op, collected(in, mask, unravel(o, out), x))));
  return y;
}

Output run_reduce(ReduceOp op, const Shape& in, uint32_t mask, const std::vector<float>& x) {
  Output y(volume(reduced_shape(in, mask)));
  cpu::reduce(reduce_params(op, in, mask), x.data(), y.data());
  return y;
}

constexpr Tolerance kReduceTol{1e-6, 1e-6};

TEST(Reduce, OnnxExamples) {
  // The ReduceSum/Mean/Max/Min/Prod "keepdims" examples: shape [3, 2, 2], axes [1].
  const Shape s = {3, 2, 2};
  const std::vector<float> x = {5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2};
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kSum, s, 0b010, x), {25, 3, 70, 3, 115, 3}, kExact));
  EXPECT_TRUE(
      all_close(run_reduce(ReduceOp::kMean, s, 0b010, x), {12.5, 1.5, 35, 1.5, 57.5, 1.5}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kMax, s, 0b010, x), {20, 2, 40, 2, 60, 2}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kMin, s, 0b010, x), {5, 1, 30, 1, 55, 1}, kExact));
  const std::vector<float> seq = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kProd, s, 0b010, seq), {3, 8, 35, 48, 99, 120}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kL1, s, 0b100, seq), {3, 7, 11, 15, 19, 23}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kL2, s, 0b100, seq),
                        {2.23606798, 5, 7.81024968, 10.63014581, 13.45362405, 16.2788206},
                        {1e-7, 0}));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kSumSquare, s, 0b100, seq),
                        {5, 25, 61, 113, 181, 265}, kExact));
  // Every axis at once, negative values: L1 ignores the signs, Sum does not.
  const std::vector<float> mixed = {-1, 2, -3, 4};
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kL1, {2, 2}, 0b11, mixed), {10}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kSum, {2, 2}, 0b11, mixed), {2}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kLogSum, {2, 2}, 0b01, {1, 2, 3, 4}),
                        {std::log(4.0), std::log(6.0)}, {1e-7, 0}));
}

// check(op, mask, positive) for every op and every axis mask of a rank-4 shape, traced; positive:
// the op wants positive inputs (LogSum stays defined, Prod of up to 24 values stays tame).
template <typename Check>
void every_op_every_mask(Check check) {
  for (ReduceOp op : kEveryReduceOp)
    for (uint32_t mask = 0; mask < 16; ++mask) {
      SCOPED_TRACE("op " + std::to_string(int(op)) + " mask " + std::to_string(mask));
      check(op, mask, op == ReduceOp::kLogSum || op == ReduceOp::kProd);
    }
}

TEST(Reduce, EveryOpEveryMaskOfRank4) {
  SEEDED_RNG(rng);
  const Shape s = {2, 3, 1, 4};
  every_op_every_mask([&](ReduceOp op, uint32_t mask, bool positive) {
    // Positive inputs in [0.5, 1.5].
    const std::vector<float> x = rng.uniform(volume(s), positive ? 0.5f : -2.f, positive ? 1.5f : 2.f);
    EXPECT_TRUE(all_close(run_reduce(op, s, mask, x), reduce_reference(op, s, mask, x), kReduceTol));
  });
}

// The float64 overload (CPU backend only) computes in double throughout: against the long double
// reference with a float64 tolerance, on inputs with more precision than a float holds.
TEST(Reduce, Float64EveryOpEveryMaskOfRank4) {
  SEEDED_RNG(rng);
  const Shape s = {2, 3, 1, 4};
  every_op_every_mask([&](ReduceOp op, uint32_t mask, bool positive) {
    std::vector<double> x;
    for (int64_t i = 0; i < volume(s); ++i)
      x.push_back((positive ? 1.0 : 0.0) + double(rng.uniform(-0.5f, 0.5f)) * (1.0 + 1e-9 * i));
    // The long double reference of reduce_reference, on the doubles themselves.
    const Shape out_shape = reduced_shape(s, mask);
    std::vector<double> got(size_t(volume(out_shape)), -7.0);
    cpu::reduce(reduce_params(op, s, mask), x.data(), got.data());
    for (int64_t o = 0; o < volume(out_shape); ++o) {
      const long double r = reduced(op, collected(s, mask, unravel(o, out_shape), x));
      EXPECT_NEAR(got[size_t(o)], double(r), 1e-13 * (1.0 + std::fabs(double(r)))) << o;
    }
  });
}

TEST(Reduce, Rank8ScatteredAxesAndRank0) {
  SEEDED_RNG(rng);
  const Shape s = {2, 1, 3, 2, 1, 2, 3, 2};
  for (ReduceOp op : kEveryReduceOp)
    for (uint32_t mask : {0b10100101u, 0b01011010u, 0xffu, 0x80u}) {
      SCOPED_TRACE("op " + std::to_string(int(op)) + " mask " + std::to_string(mask));
      const std::vector<float> x = rng.uniform(volume(s), 0.5f, 1.5f);
      EXPECT_TRUE(all_close(run_reduce(op, s, mask, x), reduce_reference(op, s, mask, x), kReduceTol));
    }
  // A scalar: the op applied to one element.
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kSumSquare, {}, 0, {-3.f}), {9}, kExact));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kL2, {}, 0, {-3.f}), {3}, kExact));
}

TEST(Reduce, LogSumExpIsStableAndHandlesInfinities) {
  // Naively exp(1000) overflows; the shifted form gives 1000 + log(3).
  const std::vector<float> big = {1000, 1000, 1000, -1000, 999, 998};
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kLogSumExp, {2, 3}, 0b10, big),
                        {1000 + std::log(3.0), 999 + std::log(1 + std::exp(-1.0) + std::exp(-1999.0))},
                        {1e-7, 0}));
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kLogSumExp, {2, 2}, 0b10, {-INFINITY, -INFINITY, INFINITY, 1}),
                        {-kInf, kInf}, kExact));
  // Far below: exp underflows to 0 for every element, the shift keeps the answer.
  EXPECT_TRUE(all_close(run_reduce(ReduceOp::kLogSumExp, {2}, 0b1, {-2000, -2000}),
                        {-2000 + std::log(2.0)}, {1e-7, 0}));
}

TEST(Reduce, MaxAndMinPropagateNaN) {
  const std::vector<float> x = {1, NAN, 3, 4, 5, 6};
  for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kLogSumExp}) {
    SCOPED_TRACE("op " + std::to_string(int(op)));
    const Output y = run_reduce(op, {2, 3}, 0b10, x);
    EXPECT_TRUE(std::isnan(y[0]) && !is_poison(y[0])) << y[0];
    EXPECT_FALSE(std::isnan(y[1]));
    EXPECT_TRUE(y.guard_intact());
  }
}

TEST(Reduce, EmptyReductionGivesTheIdentity) {
  const Shape s = {2, 0, 3};
  const std::vector<float> none;
  const std::pair<ReduceOp, double> cases[] = {
      {ReduceOp::kSum, 0},    {ReduceOp::kProd, 1},        {ReduceOp::kMax, -kInf},
      {ReduceOp::kMin, kInf}, {ReduceOp::kLogSumExp, -kInf}, {ReduceOp::kLogSum, -kInf},
      {ReduceOp::kL2, 0},
  };
  for (const auto& [op, want] : cases) {
    SCOPED_TRACE("op " + std::to_string(int(op)));
    EXPECT_TRUE(all_close(run_reduce(op, s, 0b010, none), std::vector<double>(6, want), kExact));
  }
  const Output mean = run_reduce(ReduceOp::kMean, s, 0b010, none);
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(std::isnan(mean[i]) && !is_poison(mean[i]));
}

}  // namespace
}  // namespace jetplan::kernels
