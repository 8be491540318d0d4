// The RoiPool twin (kernels/cpu/roi_pool.cc) against hand-computed bins (RoiAlign's avg and max
// in both coordinate modes, samples past the border, MaxRoiPool's rounding half away from
// zero), bad boxes (batch indices outside the batch, NaN and huge coordinates: zeros or finite
// work, never a read outside X), and against naive references written the way ONNX Runtime is
// (roialign.cc: a pre-computed table of taps per box, the channels summed over it;
// roi_pool.cc) on random data, every mode, with float32 coordinates and double sums. Tolerance:
// 1e-5 relative, 1e-6 absolute (float32 sums against double ones). ONNX Runtime itself checks
// the plans in tests/e2e/roi_pool_onnxruntime.py and the ONNX node tests in tests/conformance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using test_util::Output;

RoiPoolParams params_of(RoiPoolMode mode, int64_t n, int64_t c, int64_t h, int64_t w,
                        int64_t rois, int64_t out_h, int64_t out_w) {
  RoiPoolParams p;
  p.mode = mode;
  p.batch = n;
  p.channels = c;
  p.height = h;
  p.width = w;
  p.rois = rois;
  p.out_h = out_h;
  p.out_w = out_w;
  return p;
}

std::vector<float> run(const RoiPoolParams& p, const std::vector<float>& x,
                       const std::vector<float>& rois, const std::vector<int64_t>& batch = {}) {
  const int64_t n = roi_pool_outputs(p);
  Output y(n);
  cpu::roi_pool(p, x.data(), rois.data(), batch.empty() ? nullptr : batch.data(), y.data());
  EXPECT_TRUE(y.guard_intact());
  return std::vector<float>(y.data(), y.data() + n);
}

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// ------------------------------------------------------- naive references, ONNX Runtime's way

struct PreCalc {
  int64_t pos[4];
  float w[4];
};

std::vector<double> align_reference(const RoiPoolParams& p, const std::vector<float>& x,
                                    const std::vector<float>& rois,
                                    const std::vector<int64_t>& batch) {
  std::vector<double> y;
  const float offset = p.half_pixel ? 0.5f : 0.f;
  for (int64_t r = 0; r < p.rois; ++r) {
    const float* roi = &rois[static_cast<size_t>(r * 4)];
    const float sw = roi[0] * p.spatial_scale - offset, sh = roi[1] * p.spatial_scale - offset;
    const float ew = roi[2] * p.spatial_scale - offset, eh = roi[3] * p.spatial_scale - offset;
    float rw = ew - sw, rh = eh - sh;
    if (!p.half_pixel) rw = std::max(rw, 1.f), rh = std::max(rh, 1.f);
    const float bh = rh / static_cast<float>(p.out_h), bw = rw / static_cast<float>(p.out_w);
    const int64_t gh = p.sampling_ratio > 0 ? p.sampling_ratio
                                            : static_cast<int64_t>(std::ceil(rh / p.out_h));
    const int64_t gw = p.sampling_ratio > 0 ? p.sampling_ratio
                                            : static_cast<int64_t>(std::ceil(rw / p.out_w));
    const int64_t count = std::max<int64_t>(gh * gw, 1);
    std::vector<PreCalc> table;
    for (int64_t ph = 0; ph < p.out_h; ++ph)
      for (int64_t pw = 0; pw < p.out_w; ++pw)
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix) {
            float yy = sh + ph * bh + static_cast<float>(iy + .5f) * bh / static_cast<float>(gh);
            float xx = sw + pw * bw + static_cast<float>(ix + .5f) * bw / static_cast<float>(gw);
            PreCalc pc{{0, 0, 0, 0}, {0, 0, 0, 0}};
            if (!(yy < -1.0 || yy > p.height || xx < -1.0 || xx > p.width)) {
              yy = std::max(yy, 0.f);
              xx = std::max(xx, 0.f);
              int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;
              if (yl >= p.height - 1) yh = yl = p.height - 1, yy = static_cast<float>(yl);
              else yh = yl + 1;
              if (xl >= p.width - 1) xh = xl = p.width - 1, xx = static_cast<float>(xl);
              else xh = xl + 1;
              const float ly = yy - yl, lx = xx - xl, hy = 1.f - ly, hx = 1.f - lx;
              pc = {{yl * p.width + xl, yl * p.width + xh, yh * p.width + xl, yh * p.width + xh},
                    {hy * hx, hy * lx, ly * hx, ly * lx}};
            }
            table.push_back(pc);
          }
    const int64_t b = batch[static_cast<size_t>(r)];
    for (int64_t c = 0; c < p.channels; ++c) {
      const float* plane = &x[static_cast<size_t>((b * p.channels + c) * p.height * p.width)];
      size_t at = 0;
      for (int64_t bin = 0; bin < p.out_h * p.out_w; ++bin) {
        double sum = 0, best = 0;
        bool first = true;
        for (int64_t s = 0; s < gh * gw; ++s, ++at) {
          const PreCalc& pc = table[at];
          double m = -std::numeric_limits<double>::infinity();
          for (int k = 0; k < 4; ++k) {
            const double t = static_cast<double>(pc.w[k]) * plane[pc.pos[k]];
            sum += t;
            m = std::max(m, t);
          }
          best = first ? m : std::max(best, m);
          first = false;
        }
        y.push_back(p.mode == RoiPoolMode::kAlignAvg ? sum / static_cast<double>(count) : best);
      }
    }
  }
  return y;
}

std::vector<double> max_reference(const RoiPoolParams& p, const std::vector<float>& x,
                                  const std::vector<float>& rois) {
  std::vector<double> y;
  for (int64_t r = 0; r < p.rois; ++r) {
    const float* roi = &rois[static_cast<size_t>(r * 5)];
    const int b = static_cast<int>(roi[0]);
    const int sw = static_cast<int>(std::round(roi[1] * p.spatial_scale));
    const int sh = static_cast<int>(std::round(roi[2] * p.spatial_scale));
    const int ew = static_cast<int>(std::round(roi[3] * p.spatial_scale));
    const int eh = static_cast<int>(std::round(roi[4] * p.spatial_scale));
    const float bh = static_cast<float>(std::max(eh - sh + 1, 1)) / static_cast<float>(p.out_h);
    const float bw = static_cast<float>(std::max(ew - sw + 1, 1)) / static_cast<float>(p.out_w);
    const int H = static_cast<int>(p.height), W = static_cast<int>(p.width);
    for (int64_t c = 0; c < p.channels; ++c)
      for (int ph = 0; ph < p.out_h; ++ph)
        for (int pw = 0; pw < p.out_w; ++pw) {
          const int h0 = std::min(std::max(static_cast<int>(std::floor(ph * bh)) + sh, 0), H);
          const int h1 = std::min(std::max(static_cast<int>(std::ceil((ph + 1) * bh)) + sh, 0), H);
          const int w0 = std::min(std::max(static_cast<int>(std::floor(pw * bw)) + sw, 0), W);
          const int w1 = std::min(std::max(static_cast<int>(std::ceil((pw + 1) * bw)) + sw, 0), W);
          double m = h1 <= h0 || w1 <= w0 ? 0.0 : -std::numeric_limits<float>::max();
          for (int h = h0; h < h1; ++h)
            for (int w = w0; w < w1; ++w)
              m = std::max<double>(m, x[static_cast<size_t>(((b * p.channels + c) * H + h) * W + w)]);
          y.push_back(m);
        }
  }
  return y;
}

// ------------------------------------------------------------------------------------ tests

// X [1, 1, 4, 4] = 0..15, the box (0, 0)-(3, 3) as one bin of one sample.
TEST(CpuRoiPool, AlignOneSampleBothModes) {
  const std::vector<float> x = ramp(16);
  RoiPoolParams p = params_of(RoiPoolMode::kAlignAvg, 1, 1, 4, 4, 1, 1, 1);
  p.sampling_ratio = 1;
  // output_half_pixel: the sample at (1.5, 1.5) averages x 5, 6, 9, 10, each weighted 0.25.
  EXPECT_EQ(run(p, x, {0, 0, 3, 3}, {0}), std::vector<float>{7.5f});
  p.mode = RoiPoolMode::kAlignMax;  // the largest weighted tap: 0.25 * 10
  EXPECT_EQ(run(p, x, {0, 0, 3, 3}, {0}), std::vector<float>{2.5f});
  // half_pixel: the box moves by -0.5, the sample lands on (1, 1): x[5] with weight 1.
  p.half_pixel = true;
  EXPECT_EQ(run(p, x, {0, 0, 3, 3}, {0}), std::vector<float>{5.f});
  p.mode = RoiPoolMode::kAlignAvg;
  EXPECT_EQ(run(p, x, {0, 0, 3, 3}, {0}), std::vector<float>{5.f});
}

TEST(CpuRoiPool, AlignSamplesAtAndPastTheBorder) {
  const std::vector<float> x = ramp(16);
  RoiPoolParams p = params_of(RoiPoolMode::kAlignAvg, 1, 1, 4, 4, 3, 1, 1);
  // A box far outside reads nothing (0); one whose sample lies in (H - 1, H] reads the last
  // row and column (x[15]): output_half_pixel makes the 0.4-pixel box 1x1, its sample 3.7.
  // One whose sample lies in [-1, 0) reads row and column 0.
  EXPECT_EQ(run(p, x, {10, 10, 12, 12, 3.2f, 3.2f, 3.6f, 3.6f, -1.5f, -1.5f, -0.5f, -0.5f},
                {0, 0, 0}),
            (std::vector<float>{0.f, 15.f, 0.f}));
}

TEST(CpuRoiPool, MaxRoiPoolWindowsAndRounding) {
  const std::vector<float> x = ramp(16);
  RoiPoolParams p = params_of(RoiPoolMode::kMax, 1, 1, 4, 4, 1, 2, 2);
  EXPECT_EQ(run(p, x, {0, 0, 0, 3, 3}), (std::vector<float>{5, 7, 13, 15}));
  // 2.5 rounds to 3 and 0.5 to 1 (half away from zero, as std::round): a 1x1 box on x[1][3];
  // rounding half to even would read x[0][2].
  EXPECT_EQ(run(p, x, {0, 2.5f, 0.5f, 2.5f, 0.5f}), (std::vector<float>{7, 7, 7, 7}));
  p.spatial_scale = 0.5f;  // (0, 0)-(1, 1) after scaling: 2x2 pixels, one a bin
  EXPECT_EQ(run(p, x, {0, 0, 0, 2, 2}), (std::vector<float>{0, 1, 4, 5}));
}

// Batch indices outside [0, N) give zeros; MaxRoiPool's index truncates toward zero (-0.5 is
// image 0, 1.7 image 1, -1 and 2 none).
TEST(CpuRoiPool, BatchIndicesOutsideTheBatchGiveZeros) {
  const std::vector<float> x = ramp(32);  // [2, 1, 4, 4]
  RoiPoolParams p = params_of(RoiPoolMode::kAlignAvg, 2, 1, 4, 4, 4, 1, 1);
  p.sampling_ratio = 1;
  const std::vector<float> box = {0, 0, 3, 3, 0, 0, 3, 3, 0, 0, 3, 3, 0, 0, 3, 3};
  EXPECT_EQ(run(p, x, box, {1, 2, -1, std::numeric_limits<int64_t>::min()}),
            (std::vector<float>{23.5f, 0, 0, 0}));
  const RoiPoolParams q = params_of(RoiPoolMode::kMax, 2, 1, 4, 4, 5, 1, 1);
  EXPECT_EQ(run(q, x, {-0.5f, 0, 0, 3, 3, 1.7f, 0, 0, 3, 3, -1, 0, 0, 3, 3, 2, 0, 0, 3, 3, NAN,
                       0, 0, 3, 3}),
            (std::vector<float>{15, 31, 0, 0, 0}));
}

// NaN, infinite and huge coordinates: every output written, finite work, no read outside X.
TEST(CpuRoiPool, BadCoordinatesStayInside) {
  const std::vector<float> x = ramp(16);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> rois = {NAN, 0, 3, 3, -inf, -inf, inf, inf, -3e38f, 0, 3e38f, 3,
                                   0, NAN, 3, inf};
  for (RoiPoolMode mode : {RoiPoolMode::kAlignAvg, RoiPoolMode::kAlignMax})
    for (bool half : {false, true}) {
      RoiPoolParams p = params_of(mode, 1, 1, 4, 4, 4, 2, 2);
      p.half_pixel = half;
      for (float v : run(p, x, rois, {0, 0, 0, 0})) EXPECT_FALSE(test_util::is_poison(v));
    }
  const RoiPoolParams q = params_of(RoiPoolMode::kMax, 1, 1, 4, 4, 3, 2, 2);
  const std::vector<float> y = run(q, x, {0, NAN, NAN, NAN, NAN, 0, -inf, -inf, inf, inf, 0,
                                          -3e38f, 0, 3e38f, 3});
  for (float v : y) EXPECT_FALSE(test_util::is_poison(v) || std::isnan(v));
}

// Random boxes (partly outside X, malformed ones too) against ONNX Runtime's structure.
TEST(CpuRoiPool, MatchesOnnxRuntimeStyleReference) {
  SEEDED_RNG(rng);
  const int64_t n = 2, c = 3, h = 9, w = 11, r = 12;
  const std::vector<float> x = rng.uniform(n * c * h * w, -2, 2);
  std::vector<float> rois4, rois5;
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < r; ++i) {
    float x1 = rng.uniform(-4, 14), y1 = rng.uniform(-4, 12);
    // A third of the boxes malformed (x2 < x1), the rest up to 10 pixels wide.
    const bool bad = i % 3 == 0;
    float x2 = bad ? x1 - rng.uniform(0, 0.4f) : x1 + rng.uniform(0, 10);
    float y2 = bad ? y1 - rng.uniform(0, 0.4f) : y1 + rng.uniform(0, 10);
    const int64_t b = rng.integer(0, n - 1);
    rois4.insert(rois4.end(), {x1, y1, x2, y2});
    rois5.insert(rois5.end(), {static_cast<float>(b), x1, y1, x2, y2});
    batch.push_back(b);
  }
  for (RoiPoolMode mode : {RoiPoolMode::kAlignAvg, RoiPoolMode::kAlignMax})
    for (bool half : {false, true})
      for (int64_t ratio : {0, 1, 2, 3})
        for (float scale : {1.f, 0.5f, 1.3f}) {
          RoiPoolParams p = params_of(mode, n, c, h, w, r, 3, 4);
          p.half_pixel = half;
          p.sampling_ratio = ratio;
          p.spatial_scale = scale;
          Output y(roi_pool_outputs(p));
          cpu::roi_pool(p, x.data(), rois4.data(), batch.data(), y.data());
          EXPECT_TRUE(test_util::all_close(y, align_reference(p, x, rois4, batch), {1e-5, 1e-6}))
              << "mode " << int(mode) << " half_pixel " << half << " ratio " << ratio
              << " scale " << scale;
        }
  for (float scale : {1.f, 0.5f, 0.0625f, 1.3f})
    for (int64_t out : {1, 2, 5}) {
      RoiPoolParams p = params_of(RoiPoolMode::kMax, n, c, h, w, r, out, out + 1);
      p.spatial_scale = scale;
      Output y(roi_pool_outputs(p));
      cpu::roi_pool(p, x.data(), rois5.data(), nullptr, y.data());
      EXPECT_TRUE(test_util::all_close(y, max_reference(p, x, rois5), test_util::kExact))
          << "scale " << scale << " out " << out;
    }
}

}  // namespace
}  // namespace jetplan::kernels
