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

// -------------------------------------------------------------------------------------- LRN

LrnParams lrn_params(int64_t n, int64_t c, int64_t s, int64_t size, float alpha, float beta,
                     float bias) {
  return LrnParams{n, c, s, size, alpha, beta, bias};
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
