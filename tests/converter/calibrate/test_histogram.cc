// Histograms of calibration and the methods that turn them into an amax, on synthetic data
// whose answer is known: uniform data clips near its max, a gaussian with one huge outlier clips
// far below the outlier (entropy, mse), all zeros gives no amax (never a zero one), and any split
// of the data merged in any order gives the same histogram bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "converter/src/calibrate/histogram.h"

namespace jetplan::converter::testing {
namespace {

std::vector<float> uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> gaussian(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

float max_abs(const std::vector<float>& v) {
  float m = 0.f;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

float amax(const TensorHistogram& h, CalibrationMethod method, double percentile = 99.99) {
  const auto a = compute_amax(h, method, percentile);
  EXPECT_TRUE(a.has_value());
  return a.value_or(0.f);
}

TEST(Histogram, UniformClipsNearItsMax) {
  const std::vector<float> v = uniform(200000, -3.f, 3.f, 1);
  TensorHistogram h;
  h.add(v.data(), v.size());
  const float m = max_abs(v);
  EXPECT_EQ(h.abs_max(), m);
  EXPECT_EQ(h.count(), v.size());
  EXPECT_EQ(amax(h, CalibrationMethod::kMinMax), m);
  EXPECT_NEAR(amax(h, CalibrationMethod::kPercentile), m, 0.01f * m);
  EXPECT_NEAR(amax(h, CalibrationMethod::kPercentile, 90.0), 0.9f * m, 0.01f * m);
  // Uniform data loses nothing to clipping that rounding would not lose more of.
  EXPECT_GT(amax(h, CalibrationMethod::kEntropy), 0.9f * m);
  EXPECT_LE(amax(h, CalibrationMethod::kEntropy), m);
  EXPECT_GT(amax(h, CalibrationMethod::kMse), 0.8f * m);
  EXPECT_LE(amax(h, CalibrationMethod::kMse), m);
}

TEST(Histogram, GaussianWithAHugeOutlierClipsFarBelowIt) {
  std::vector<float> v = gaussian(1000000, 2);
  v[12345] = 100.f;
  TensorHistogram h;
  h.add(v.data(), v.size());
  EXPECT_EQ(amax(h, CalibrationMethod::kMinMax), 100.f);
  // The body is within about 5 sigma; a clip near the outlier would waste most of int8's levels.
  const float entropy = amax(h, CalibrationMethod::kEntropy);
  const float mse = amax(h, CalibrationMethod::kMse);
  const float percentile = amax(h, CalibrationMethod::kPercentile);
  EXPECT_LT(entropy, 30.f);
  EXPECT_GT(entropy, 3.f);
  EXPECT_LT(mse, 30.f);
  EXPECT_GT(mse, 2.f);
  EXPECT_LT(percentile, 6.f);
  EXPECT_GT(percentile, 3.f);
}

TEST(Histogram, AllZerosHaveNoAmax) {
  const std::vector<float> zeros(1000, 0.f);
  TensorHistogram h;
  h.add(zeros.data(), zeros.size());
  for (CalibrationMethod m : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile,
                              CalibrationMethod::kEntropy, CalibrationMethod::kMse}) {
    EXPECT_FALSE(compute_amax(h, m, 99.99).has_value());
  }
  TensorHistogram empty;
  EXPECT_FALSE(compute_amax(empty, CalibrationMethod::kMinMax, 99.99).has_value());
}

TEST(Histogram, NonFiniteValuesAreCountedApart) {
  const std::vector<float> v = {1.f, -2.f, NAN, INFINITY, -INFINITY, 0.5f};
  TensorHistogram h;
  h.add(v.data(), v.size());
  EXPECT_EQ(h.abs_max(), 2.f);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.non_finite(), 3u);
  EXPECT_EQ(amax(h, CalibrationMethod::kMinMax), 2.f);
}

// A later sample beyond the range re-bins the earlier counts: the result is what one pass over
// everything gives, whatever the split and the merge order.
TEST(Histogram, RangeGrowsAndMergesExactlyWhateverTheSplit) {
  std::vector<float> v = gaussian(30000, 3);
  for (size_t i = 0; i < v.size(); i += 1000) v[i] *= 50.f;  // some far larger values, late too
  std::vector<float> zeros(500, 0.f);
  TensorHistogram whole;
  whole.add(zeros.data(), zeros.size());
  whole.add(v.data(), v.size());
  for (size_t parts : {2u, 3u, 7u}) {
    std::vector<TensorHistogram> pieces(parts);
    pieces[parts - 1].add(zeros.data(), zeros.size());
    for (size_t i = 0; i < v.size(); i += 100) {
      pieces[(i / 100 * 5) % parts].add(v.data() + i, 100);  // small growing chunks, interleaved
    }
    TensorHistogram forward, backward;
    for (size_t p = 0; p < parts; ++p) forward.merge(pieces[p]);
    for (size_t p = parts; p-- > 0;) backward.merge(pieces[p]);
    for (const TensorHistogram* h : {&forward, &backward}) {
      EXPECT_EQ(h->bins(), whole.bins()) << parts << " parts";
      EXPECT_EQ(h->range(), whole.range());
      EXPECT_EQ(h->abs_max(), whole.abs_max());
      EXPECT_EQ(h->count(), whole.count());
      EXPECT_EQ(amax(*h, CalibrationMethod::kEntropy), amax(whole, CalibrationMethod::kEntropy));
    }
  }
  EXPECT_GT(whole.range(), whole.abs_max());
  EXPECT_LE(whole.range(), 2.0 * whole.abs_max());
}

TEST(Histogram, AmaxNeverExceedsTheLargestValue) {
  const std::vector<float> v = {0.001f, 0.002f, 0.003f};  // fewer bins used than 128 levels
  TensorHistogram h;
  h.add(v.data(), v.size());
  for (CalibrationMethod m : {CalibrationMethod::kMinMax, CalibrationMethod::kPercentile,
                              CalibrationMethod::kEntropy, CalibrationMethod::kMse}) {
    const float a = amax(h, m);
    EXPECT_GT(a, 0.f);
    EXPECT_LE(a, 0.003f);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
