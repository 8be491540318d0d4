// cpu::resize against the expected outputs of the ONNX backend node tests test_resize_* and
// test_upsample_nearest: numbers copied from their output .pb files, attributes from their
// models. Scales given as float are widened exactly; sizes give scale out / in.

#include <cmath>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/resize_case.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(i + 1);
  return v;
}

// An NCHW case with N = C = 1 over the input 1..h*w, as every test_resize_* uses.
ResizeCase image_case(ResizeMode mode, ResizeCoord coord, int64_t h, int64_t w, int64_t oh,
                      int64_t ow, double sh, double sw, double lh, double lw) {
  ResizeCase c;
  c.mode = mode;
  c.coord = coord;
  c.in = {1, 1, h, w};
  c.out = {1, 1, oh, ow};
  c.scale = {1, 1, sh, sw};
  c.length = {1, 1, lh, lw};
  return c;
}

// From `sizes`: the scale is out / in.
ResizeCase sized(ResizeMode mode, ResizeCoord coord, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  return image_case(mode, coord, h, w, oh, ow, double(oh) / double(h), double(ow) / double(w),
                    double(oh), double(ow));
}

// From float `scales`: the output is floor(in * scale), the resized length in * scale.
ResizeCase scaled(ResizeMode mode, ResizeCoord coord, int64_t h, int64_t w, float sh, float sw) {
  const double lh = double(h) * double(sh), lw = double(w) * double(sw);
  return image_case(mode, coord, h, w, int64_t(std::floor(lh)), int64_t(std::floor(lw)), sh, sw,
                    lh, lw);
}

constexpr Tolerance kOnnxDataTol{2e-6, 2e-6};  // the .pb values carry 9 digits, some float math

TEST(ResizeOnnxData, Nearest) {
  const auto half = ResizeCoord::kHalfPixel;
  EXPECT_TRUE(all_close(run_resize(scaled(kNearest, half, 2, 4, 0.6f, 0.6f), iota(8)), {1, 3},
                        kExact));  // downsample_scales_nearest
  EXPECT_TRUE(all_close(run_resize(sized(kNearest, half, 2, 4, 1, 3), iota(8)), {1, 2, 4},
                        kExact));  // downsample_sizes_nearest
  const std::vector<double> up = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                  3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  EXPECT_TRUE(all_close(run_resize(scaled(kNearest, half, 2, 2, 2.f, 3.f), iota(4)), up, kExact));
  // test_upsample_nearest (opset 9 Upsample): nearest, asymmetric, floor.
  ResizeCase upsample = scaled(kNearest, ResizeCoord::kAsymmetric, 2, 2, 2.f, 3.f);
  upsample.nearest = ResizeNearest::kFloor;
  EXPECT_TRUE(all_close(run_resize(upsample, iota(4)), up, kExact));

  std::vector<double> sizes_up;  // upsample_sizes_nearest: 2x2 -> 7x8
  for (int r : {0, 0, 0, 0, 1, 1, 1})
    for (int col : {0, 0, 0, 0, 1, 1, 1, 1}) sizes_up.push_back(1 + 2 * r + col);
  EXPECT_TRUE(all_close(run_resize(sized(kNearest, half, 2, 2, 7, 8), iota(4)), sizes_up, kExact));
}

// 4x4 -> 8x8 with nearest_mode / coordinate mode pairs; pick[i] is the source row and column of
// output i in each dim.
std::vector<double> gather_4x4(const std::vector<int>& pick) {
  std::vector<double> v;
  for (int r : pick)
    for (int col : pick) v.push_back(1 + 4 * r + col);
  return v;
}

TEST(ResizeOnnxData, NearestModes) {
  ResizeCase ceil_half = sized(kNearest, ResizeCoord::kHalfPixel, 4, 4, 8, 8);
  ceil_half.nearest = ResizeNearest::kCeil;
  EXPECT_TRUE(all_close(run_resize(ceil_half, iota(16)), gather_4x4({0, 1, 1, 2, 2, 3, 3, 3}),
                        kExact));
  ResizeCase floor_corners = sized(kNearest, ResizeCoord::kAlignCorners, 4, 4, 8, 8);
  floor_corners.nearest = ResizeNearest::kFloor;
  EXPECT_TRUE(all_close(run_resize(floor_corners, iota(16)), gather_4x4({0, 0, 0, 1, 1, 2, 2, 3}),
                        kExact));
  ResizeCase ceil_asym = sized(kNearest, ResizeCoord::kAsymmetric, 4, 4, 8, 8);
  ceil_asym.nearest = ResizeNearest::kRoundPreferCeil;
  EXPECT_TRUE(all_close(run_resize(ceil_asym, iota(16)), gather_4x4({0, 1, 1, 2, 2, 3, 3, 3}),
                        kExact));
  // Same coordinates (x / 2) with round_prefer_floor: the halves go down instead.
  ceil_asym.nearest = ResizeNearest::kRoundPreferFloor;
  EXPECT_TRUE(all_close(run_resize(ceil_asym, iota(16)), gather_4x4({0, 0, 1, 1, 2, 2, 3, 3}),
                        kExact));
  const ResizeCase tf_nn = sized(kNearest, ResizeCoord::kTfHalfPixelForNn, 4, 4, 3, 2);
  EXPECT_TRUE(all_close(run_resize(tf_nn, iota(16)), {6, 8, 10, 12, 14, 16}, kExact));
}

TEST(ResizeOnnxData, Linear) {
  const auto half = ResizeCoord::kHalfPixel, corners = ResizeCoord::kAlignCorners;
  EXPECT_TRUE(all_close(run_resize(scaled(kLinear, half, 2, 4, 0.6f, 0.6f), iota(8)),
                        {2.66666651, 4.33333302}, kOnnxDataTol));
  EXPECT_TRUE(all_close(run_resize(scaled(kLinear, corners, 2, 4, 0.6f, 0.6f), iota(8)),
                        {1.0, 3.14285707}, kOnnxDataTol));
  EXPECT_TRUE(all_close(run_resize(scaled(kLinear, half, 2, 2, 2.f, 2.f), iota(4)),
                        {1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25,
                         3.75, 4.0},
                        kExact));
  EXPECT_TRUE(all_close(run_resize(scaled(kLinear, corners, 2, 2, 2.f, 2.f), iota(4)),
                        {1.0, 1.33333337, 1.66666663, 2.0, 1.66666663, 2.0, 2.33333325, 2.66666675,
                         2.33333325, 2.66666675, 3.0, 3.33333325, 3.0, 3.33333325, 3.66666675, 4.0},
                        kOnnxDataTol));
  // Width 4 -> 1 puts the column at 0; height 4 -> 3 is ordinary half pixel.
  EXPECT_TRUE(all_close(
      run_resize(sized(kLinear, ResizeCoord::kPytorchHalfPixel, 4, 4, 3, 1), iota(16)),
      {1.66666663, 7.0, 12.333333}, kOnnxDataTol));
}

TEST(ResizeOnnxData, TfCropAndResizeExtrapolates) {
  ResizeCase c = sized(kLinear, ResizeCoord::kTfCropAndResize, 4, 4, 3, 3);
  c.roi_start = {0, 0, 0.4f, 0.6f};
  c.roi_end = {1, 1, 1.2f, 1.7f};
  c.extrapolation = 10.f;
  EXPECT_TRUE(all_close(run_resize(c, iota(16)), {7.60000038, 10, 10, 12.4000006, 10, 10, 10, 10, 10},
                        kOnnxDataTol));
}

TEST(ResizeOnnxData, Cubic) {
  const auto half = ResizeCoord::kHalfPixel;
  EXPECT_TRUE(all_close(run_resize(scaled(kCubic, half, 4, 4, 0.8f, 0.8f), iota(16)),
                        {1.47119141, 2.78125, 4.08251953, 6.71142578, 8.02148438, 9.32275391,
                         11.9165039, 13.2265625, 14.527832},
                        kOnnxDataTol));
  ResizeCase excl = scaled(kCubic, half, 4, 4, 0.8f, 0.8f);
  excl.a = -0.5f;
  excl.exclude_outside = true;
  EXPECT_TRUE(all_close(run_resize(excl, iota(16)),
                        {1.36812675, 2.6695013, 4.01333666, 6.57362509, 7.875, 9.21883488,
                         11.948966, 13.2503414, 14.5941763},
                        kOnnxDataTol));
  EXPECT_TRUE(all_close(
      run_resize(scaled(kCubic, ResizeCoord::kAlignCorners, 4, 4, 0.8f, 0.8f), iota(16)),
      {1, 2.39519167, 3.7903831, 6.5807662, 7.97595787, 9.37114906, 12.1615324, 13.5567236,
       14.9519157},
      kOnnxDataTol));
  EXPECT_TRUE(all_close(run_resize(sized(kCubic, half, 4, 4, 3, 3), iota(16)),
                        {1.63078701, 3.00462961, 4.37847233, 7.12615728, 8.5, 9.87384224,
                         12.6215277, 13.9953699, 15.3692131},
                        kOnnxDataTol));
}

TEST(ResizeOnnxData, CubicUpsample) {
  EXPECT_TRUE(all_close(
      run_resize(scaled(kCubic, ResizeCoord::kHalfPixel, 4, 4, 2.f, 2.f), iota(16)),
      {0.47265625, 0.76953125, 1.24609375, 1.875,      2.28125,    2.91015625, 3.38671875,
       3.68359375, 1.66015625, 1.95703125, 2.43359375, 3.0625,     3.46875,    4.09765625,
       4.57421875, 4.87109375, 3.56640625, 3.86328125, 4.33984375, 4.96875,    5.375,
       6.00390625, 6.48046875, 6.77734375, 6.08203125, 6.37890625, 6.85546875, 7.484375,
       7.890625,   8.51953125, 8.99609375, 9.29296875, 7.70703125, 8.00390625, 8.48046875,
       9.109375,   9.515625,   10.1445312, 10.6210938, 10.9179688, 10.2226562, 10.5195312,
       10.9960938, 11.625,     12.03125,   12.6601562, 13.1367188, 13.4335938, 12.1289062,
       12.4257812, 12.9023438, 13.53125,   13.9375,    14.5664062, 15.0429688, 15.3398438,
       13.3164062, 13.6132812, 14.0898438, 14.71875,   15.125,     15.7539062, 16.2304688,
       16.5273438},
      kOnnxDataTol));
  ResizeCase excl = scaled(kCubic, ResizeCoord::kHalfPixel, 4, 4, 2.f, 2.f);
  excl.a = -0.5f;
  excl.exclude_outside = true;
  EXPECT_TRUE(all_close(
      run_resize(excl, iota(16)),
      {0.558823526, 0.814942062, 1.35698247, 1.89705884, 2.39705873, 2.93713522, 3.47917557,
       3.7352941,   1.58329761,  1.83941603, 2.38145661, 2.92153287, 3.42153287, 3.96160913,
       4.50364971,  4.75976801,  3.75145936, 4.0075779,  4.54961824, 5.0896945,  5.5896945,
       6.12977076,  6.67181158,  6.92792988, 5.91176462, 6.1678834,  6.70992374, 7.25,
       7.75,        8.29007626,  8.83211708, 9.0882349,  7.91176462, 8.16788292, 8.70992374,
       9.25,        9.75,        10.2900763, 10.8321171, 11.0882349, 10.0720701, 10.3281889,
       10.8702288,  11.410305,   11.910305,  12.4503813, 12.9924221, 13.2485409, 12.2402315,
       12.4963503,  13.0383911,  13.5784674, 14.0784674, 14.6185436, 15.1605835, 15.4167023,
       13.2647057,  13.5208244,  14.0628653, 14.6029415, 15.1029415, 15.6430178, 16.1850586,
       16.4411774},
      kOnnxDataTol));
  EXPECT_TRUE(all_close(
      run_resize(scaled(kCubic, ResizeCoord::kAsymmetric, 4, 4, 2.f, 2.f), iota(16)),
      {1,      1.40625,  2,      2.5,    3,      3.59375,  4,      4.09375,  2.625,  3.03125, 3.625,
       4.125,  4.625,    5.21875, 5.625, 5.71875, 5,      5.40625,  6,      6.5,      7,      7.59375,
       8,      8.09375,  7,      7.40625, 8,      8.5,     9,      9.59375,  10,     10.09375, 9,
       9.40625, 10,      10.5,   11,     11.59375, 12,    12.09375, 11.375, 11.78125, 12.375,
       12.875, 13.375,   13.96875, 14.375, 14.46875, 13,   13.40625, 14,     14.5,     15,
       15.59375, 16,     16.09375, 13.375, 13.78125, 14.375, 14.875, 15.375, 15.96875, 16.375,
       16.46875},
      kExact));
}

}  // namespace
}  // namespace jetplan::kernels
