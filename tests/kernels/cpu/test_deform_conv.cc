// The DeformConv twin (kernels/cpu/deform_conv.cc) against independent references: with zero
// offsets and no mask it is the plain conv (the Conv twin, kernels/cpu/conv.cc, grouped, strided,
// dilated and padded); whole-pixel offsets read x shifted (the plain conv of a shifted x); a mask
// scales each tap; a half-pixel offset blends two neighbours; offsets past x or NaN read zero.
// The ONNX node tests check it against ONNX's reference too (tests/conformance).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

ConvParams conv_of(const DeformConvParams& d) {
  ConvParams p;
  p.batch = d.batch;
  p.in_channels = d.in_channels;
  p.out_channels = d.out_channels;
  p.groups = d.groups;
  p.in_size[0] = d.in_h;
  p.in_size[1] = d.in_w;
  p.out_size[0] = d.out_h;
  p.out_size[1] = d.out_w;
  p.kernel[0] = d.kernel_h;
  p.kernel[1] = d.kernel_w;
  p.stride[0] = d.stride_h;
  p.stride[1] = d.stride_w;
  p.dilation[0] = d.dilation_h;
  p.dilation[1] = d.dilation_w;
  p.pad_begin[0] = d.pad_top;
  p.pad_begin[1] = d.pad_left;
  p.has_bias = d.has_bias;
  return p;
}

std::vector<float> uniform(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " at " << i;
}

TEST(CpuDeformConv, ZeroOffsetsAreThePlainConvAndWholePixelOffsetsShiftX) {
  std::mt19937 rng(5);
  const test_util::DeformConvShape shapes[] = {{1, 4, 7, 9, 6, 3, 3, 1, 1, 1, 1, 1},
                           {1, 4, 7, 9, 6, 3, 3, 1, 0, 1, 1, 1},
                           {2, 6, 8, 8, 4, 3, 2, 2, 0, 1, 2, 3},
                           {1, 4, 9, 7, 8, 3, 3, 1, 2, 2, 4, 2}};
  for (const test_util::DeformConvShape& s : shapes) {
    DeformConvParams p = test_util::deform_conv_params(s);
    p.has_bias = true;
    const int64_t taps = s.kh * s.kw, plane = p.out_h * p.out_w;
    const std::vector<float> x = uniform(rng, s.n * s.c * s.h * s.w);
    const std::vector<float> w = uniform(rng, s.cout * (s.c / s.groups) * taps);
    const std::vector<float> b = uniform(rng, s.cout);
    const int64_t ny = s.n * s.cout * plane;
    std::vector<float> offset(size_t(s.n * s.offset_groups * taps * 2 * plane), 0.f);
    std::vector<float> got(size_t(ny), NAN), want(size_t(ny), NAN);
    cpu::deform_conv(p, x.data(), w.data(), offset.data(), b.data(), nullptr, got.data());
    cpu::conv(conv_of(p), x.data(), w.data(), b.data(), nullptr, want.data());
    expect_close(got, want, "zero offsets");
    // Every tap offset by (+1, -2): the plain conv of x moved by (-1, +2), zero where it runs
    // out (without padding: a padded conv's taps in the padding would read x itself here).
    if (s.pad != 0) continue;
    for (int64_t i = 0; i < int64_t(offset.size()); ++i) offset[size_t(i)] = (i / plane) % 2 == 0 ? 1.f : -2.f;
    std::vector<float> shifted(x.size(), 0.f);
    for (int64_t nc = 0; nc < s.n * s.c; ++nc)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t ww = 0; ww < s.w; ++ww)
          if (h + 1 < s.h && ww - 2 >= 0)
            shifted[size_t((nc * s.h + h) * s.w + ww)] = x[size_t((nc * s.h + h + 1) * s.w + ww - 2)];
    cpu::deform_conv(p, x.data(), w.data(), offset.data(), b.data(), nullptr, got.data());
    cpu::conv(conv_of(p), shifted.data(), w.data(), b.data(), nullptr, want.data());
    expect_close(got, want, "whole-pixel offsets");
  }
}

// One channel, one 1x1 tap, one output: the sample itself, so the bilinear rule shows.
float sample(const std::vector<float>& x, int64_t h, int64_t w, float dh, float dw, float mask) {
  DeformConvParams p;
  p.in_h = h;
  p.in_w = w;
  p.has_mask = true;
  const float weight = 1.f, offset[2] = {dh, dw};
  float y = NAN;
  cpu::deform_conv(p, x.data(), &weight, offset, nullptr, &mask, &y);
  return y;
}

TEST(CpuDeformConv, BilinearSamplesMaskedAndZeroOutside) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // 2 x 3
  EXPECT_FLOAT_EQ(sample(x, 2, 3, 0.f, 0.5f, 1.f), 1.5f);
  EXPECT_FLOAT_EQ(sample(x, 2, 3, 0.5f, 0.5f, 1.f), 3.f);  // (1 + 2 + 4 + 5) / 4
  EXPECT_FLOAT_EQ(sample(x, 2, 3, 1.f, 2.f, 0.5f), 3.f);   // x[1][2] = 6, masked by half
  EXPECT_FLOAT_EQ(sample(x, 2, 3, -0.5f, 0.f, 1.f), 0.5f);  // half of x[0][0], half outside
  EXPECT_FLOAT_EQ(sample(x, 2, 3, 1.5f, 2.5f, 1.f), 1.5f);  // a quarter of x[1][2]
  EXPECT_EQ(sample(x, 2, 3, -1.f, 0.f, 1.f), 0.f);
  EXPECT_EQ(sample(x, 2, 3, 0.f, 3.f, 1.f), 0.f);
  EXPECT_EQ(sample(x, 2, 3, NAN, 0.f, 1.f), 0.f);
  EXPECT_EQ(sample(x, 2, 3, 1e30f, -1e30f, 1.f), 0.f);
}

}  // namespace
}  // namespace jetplan::kernels
