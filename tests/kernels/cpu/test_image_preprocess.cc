// The camera-frame preprocessing twin (kernels/cpu/image_preprocess.cc) on hand-built params and
// hand-computed values: a resize of scale 1 returns the pixels themselves (half-pixel centres
// land on them), YUYV's limited-range black and white and pure red, the channel order, the
// letterbox bars, NCHW offsets, and an FP16 output rounded once. The random-frame comparison
// with an independent reference (fits, odd sizes, all formats) is in
// tests/runtime/api/test_preprocess.cc, through the public API that resolves the fits.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/half.h"
#include "kernels/image_preprocess.h"

namespace jetplan::kernels {
namespace {

ImagePreprocessParams identity(PixelFormat format, int w, int h) {
  ImagePreprocessParams p;
  p.format = format;
  p.row_bytes = int64_t(w) * (format == PixelFormat::kYuyv ? 2 : 3);
  p.x = {w, w, 0, w, 1.f, 0.f};
  p.y = {h, h, 0, h, 1.f, 0.f};
  return p;
}

TEST(ImagePreprocess, ScaleOneReturnsThePixels) {
  ImagePreprocessParams p = identity(PixelFormat::kBgr8, 3, 2);
  std::vector<uint8_t> bgr(18);
  for (size_t i = 0; i < bgr.size(); ++i) bgr[i] = uint8_t(i * 13 + 1);
  std::vector<float> out(18, -1.f);
  cpu::image_preprocess(p, bgr.data(), out.data());
  for (int px = 0; px < 6; ++px)
    for (int c = 0; c < 3; ++c)  // NHWC, RGB out of BGR in
      EXPECT_EQ(out[size_t(px * 3 + c)], float(bgr[size_t(px * 3 + 2 - c)])) << px << " " << c;
  p.channels_first = true;
  p.channel_source[0] = 2, p.channel_source[2] = 0;  // a BGR network: the bytes as they are
  cpu::image_preprocess(p, bgr.data(), out.data());
  for (int px = 0; px < 6; ++px)
    for (int c = 0; c < 3; ++c)
      EXPECT_EQ(out[size_t(c * 6 + px)], float(bgr[size_t(px * 3 + c)])) << px << " " << c;
}

TEST(ImagePreprocess, YuyvLimitedRangeBlackWhiteAndRed) {
  // Pixels: black (Y 16), white (Y 235) sharing U = V = 128; then pure red (Y 81, U 90, V 240)
  // twice.
  const uint8_t yuyv[] = {16, 128, 235, 128, 81, 90, 81, 240};
  ImagePreprocessParams p = identity(PixelFormat::kYuyv, 4, 1);
  std::vector<float> out(12);
  cpu::image_preprocess(p, yuyv, out.data());
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(out[size_t(c)], 0.f, 1e-3f);
    EXPECT_NEAR(out[size_t(3 + c)], 255.f, 0.01f);
  }
  EXPECT_NEAR(out[6], 255.f, 1.5f);  // BT.601 red is (81, 90, 240) to within rounding
  EXPECT_NEAR(out[7], 0.f, 1.5f);
  EXPECT_NEAR(out[8], 0.f, 1.5f);
}

TEST(ImagePreprocess, LetterboxBarsNormalizationAndHalfOutput) {
  // A 2x1 frame stretched over x = 1..2 of a 4x1 output: bars at 0 and 3; between, the pixels.
  ImagePreprocessParams p = identity(PixelFormat::kRgb8, 2, 1);
  p.x = {2, 4, 1, 3, 1.f, -1.f};
  for (int c = 0; c < 3; ++c) {
    p.scale[c] = 1.f / 255.f / 0.5f;
    p.bias[c] = -0.25f / 0.5f;
    p.pad[c] = 7.f;
  }
  p.half = true;
  const uint8_t rgb[] = {0, 51, 255, 255, 102, 0};
  std::vector<uint16_t> out(12, 0x7e5a);
  cpu::image_preprocess(p, rgb, out.data());
  const float want[12] = {7, 7, 7, -0.5f, -0.1f, 1.5f, 1.5f, 0.3f, -0.5f, 7, 7, 7};
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(out[size_t(i)], half_from_float(want[i])) << "element " << i;
}

TEST(ImagePreprocess, UpscaleInterpolatesAndClampsAtTheEdges) {
  // 2x1 -> 4x1: half-pixel centres sample x = -0.25, 0.25, 0.75, 1.25 -> 0 (edge), 0.25, 0.75, 1
  // (edge) of the way from pixel 0 to pixel 1.
  ImagePreprocessParams p = identity(PixelFormat::kRgb8, 2, 1);
  p.x = {2, 4, 0, 4, 0.5f, 0.f};
  const uint8_t rgb[] = {0, 0, 0, 200, 100, 40};
  std::vector<float> out(12);
  cpu::image_preprocess(p, rgb, out.data());
  const float t[4] = {0.f, 0.25f, 0.75f, 1.f};
  for (int x = 0; x < 4; ++x) {
    EXPECT_FLOAT_EQ(out[size_t(x * 3)], 200 * t[x]);
    EXPECT_FLOAT_EQ(out[size_t(x * 3 + 1)], 100 * t[x]);
    EXPECT_FLOAT_EQ(out[size_t(x * 3 + 2)], 40 * t[x]);
  }
}

}  // namespace
}  // namespace jetplan::kernels
