// cpu::softmax, cpu::batch_norm, cpu::concat and cpu::copy against references written here:
// softmax shifted by a row's first element, batch norm by its formula in double, concat copied
// element by element from 3-D coordinates, and hand-computed cases.
// Every output is poisoned before each call and has a guard zone after its end; every
// comparison fails on NaN; inputs come from a seeded std::mt19937 whose seed is printed with any
// failure (JETPLAN_TEST_SEED=<n> replays it). See tests/kernels/kernel_test_util.h.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ---------------------------------------------------------------------------------- softmax

// Shifted by the first element of each row rather than the max: a different route to the same
// stable result, fine for rows whose spread is far below the exp overflow threshold.
std::vector<double> softmax_reference(const std::vector<float>& x, int64_t outer, int64_t axis,
                                      int64_t inner, bool log) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return size_t((o * axis + j) * inner + i); };
      const double shift = x[at(0)];
      double sum = 0;
      for (int64_t j = 0; j < axis; ++j) sum += std::exp(x[at(j)] - shift);
      for (int64_t j = 0; j < axis; ++j)
        y[at(j)] = log ? (x[at(j)] - shift) - std::log(sum) : std::exp(x[at(j)] - shift) / sum;
    }
  return y;
}

Output run_softmax(const std::vector<float>& x, int64_t outer, int64_t axis, int64_t inner,
                   bool log) {
  Output y(outer * axis * inner);
  cpu::softmax({outer, axis, inner, log}, x.data(), y.data());
  return y;
}

// Sum over the axis of each (outer, inner) row, of exp(y) for a log softmax.
std::vector<double> row_sums(const Output& y, int64_t outer, int64_t axis, int64_t inner,
                             bool log) {
  std::vector<double> sums;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t j = 0; j < axis; ++j) {
        const double v = y[(o * axis + j) * inner + i];
        s += log ? std::exp(v) : v;
      }
      sums.push_back(s);
    }
  return sums;
}

constexpr Tolerance kSoftmaxTol{1e-6, 1e-7};

TEST(Softmax, Hand) {
  const std::vector<float> x = {1, 2, 3};
  EXPECT_TRUE(all_close(run_softmax(x, 1, 3, 1, false), {0.0900305732, 0.244728471, 0.665240956},
                        kSoftmaxTol));
  EXPECT_TRUE(all_close(run_softmax(x, 1, 3, 1, true),
                        {-2.40760596, -1.40760596, -0.407605964}, kSoftmaxTol));
  // A single element along the axis is certain.
  EXPECT_TRUE(all_close(run_softmax(x, 3, 1, 1, false), {1, 1, 1}, kExact));
  EXPECT_TRUE(all_close(run_softmax(x, 1, 1, 3, true), {0, 0, 0}, kExact));
}

TEST(Softmax, RandomRowsAndInnerAxis) {
  SEEDED_RNG(rng);
  for (int64_t inner : {1, 5}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE("inner " + std::to_string(inner) + (log ? " log" : ""));
      const int64_t outer = 3, axis = 7;
      const std::vector<float> x = rng.uniform(outer * axis * inner, -5.f, 5.f);
      const Output y = run_softmax(x, outer, axis, inner, log);
      EXPECT_TRUE(all_close(y, softmax_reference(x, outer, axis, inner, log), kSoftmaxTol));
      EXPECT_TRUE(all_close(row_sums(y, outer, axis, inner, log),
                            std::vector<double>(size_t(outer * inner), 1.0), {0, 1e-6}));
    }
  }
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  SEEDED_RNG(rng);
  for (float center : {1000.f, -1000.f, 80.f}) {
    for (bool log : {false, true}) {
      SCOPED_TRACE("center " + std::to_string(center) + (log ? " log" : ""));
      const int64_t outer = 2, axis = 9, inner = 3;
      std::vector<float> x = rng.uniform(outer * axis * inner, -10.f, 10.f);
      for (float& v : x) v += center;
      const Output y = run_softmax(x, outer, axis, inner, log);
      EXPECT_TRUE(all_close(y, softmax_reference(x, outer, axis, inner, log), kSoftmaxTol));
      EXPECT_TRUE(all_close(row_sums(y, outer, axis, inner, log),
                            std::vector<double>(size_t(outer * inner), 1.0), {0, 1e-6}));
    }
  }
  // A spread of 2000 along one row: the small entries underflow to exactly 0, the large one is 1.
  const std::vector<float> wide = {1000.f, -1000.f, 0.f};
  EXPECT_TRUE(all_close(run_softmax(wide, 1, 3, 1, false), {1, 0, 0}, kExact));
  EXPECT_TRUE(all_close(run_softmax(wide, 1, 3, 1, true), {0, -2000, -1000}, {1e-6, 0}));
}


// A row of -inf (a query with every key masked): NaN by Softmax's own arithmetic, 0 (log-softmax
// -inf) with masked_rows_zero; the other rows as ever, in both layouts.
TEST(Softmax, MaskedRowsGiveZeroWhenAsked) {
  for (int64_t inner : {1, 2}) {
    for (bool log : {false, true}) {
      SoftmaxParams p;
      p.outer = 2;
      p.axis = 3;
      p.inner = inner;
      p.log = log;
      std::vector<float> x(size_t(2 * 3 * inner), -INFINITY);
      for (int64_t i = 3 * inner; i < 6 * inner; ++i) x[size_t(i)] = float(i % 3);  // row 1 finite
      std::vector<float> plain(x.size()), zero(x.size());
      cpu::softmax(p, x.data(), plain.data());
      p.masked_rows_zero = true;
      cpu::softmax(p, x.data(), zero.data());
      for (int64_t i = 0; i < 3 * inner; ++i) {
        EXPECT_TRUE(std::isnan(plain[size_t(i)])) << i;
        EXPECT_EQ(zero[size_t(i)], log ? -INFINITY : 0.f) << i;
      }
      for (int64_t i = 3 * inner; i < 6 * inner; ++i) EXPECT_EQ(zero[size_t(i)], plain[size_t(i)]);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
