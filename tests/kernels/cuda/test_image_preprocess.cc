// The camera-frame preprocessing kernel (kernels/cuda/image_preprocess.cu) against its CPU twin
// (kernels/cpu/image_preprocess.cc) on fresh random frames, outputs poisoned, guards checked.
// Tolerance: none, bit for bit. Both sides run the same per-pixel function
// (kernels/image_preprocess.h), whose multiply-adds are explicit fmaf calls (correctly rounded on
// both), and round to FP16 the same way (nearest even).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/image_preprocess.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

struct Frame {
  ImagePreprocessParams p;
  std::vector<uint8_t> bytes;
};

// A frame of w x h in `format` resized to out_w x out_h with a fit drawn from `fit` (0 stretch,
// 1 centre crop, 2 letterbox bars of `bar` pixels on the x axis).
Frame random_frame(test_util::SeededRng& rng, PixelFormat format, int w, int h, int out_w,
                   int out_h, int fit, bool half, bool channels_first) {
  Frame f;
  ImagePreprocessParams& p = f.p;
  p.format = format;
  p.row_bytes = int64_t(w) * (format == PixelFormat::kYuyv ? 2 : 3) + rng.integer(0, 7);
  p.x = {w, out_w, 0, out_w, float(w) / out_w, 0.f};
  p.y = {h, out_h, 0, out_h, float(h) / out_h, 0.f};
  if (fit == 1) {  // crop the x axis to the y axis' scale
    p.x.scale = p.y.scale;
    p.x.offset = (w - out_w * p.y.scale) / 2;
  } else if (fit == 2) {
    const int bar = out_w / 5;
    p.x.content_begin = bar;
    p.x.content_end = out_w - bar;
    p.x.scale = float(w) / (out_w - 2 * bar);
    p.x.offset = -bar * p.x.scale;
  }
  const bool bgr = rng.integer(0, 1) == 1;
  for (int c = 0; c < 3; ++c) {
    p.channel_source[c] = bgr ? 2 - c : c;
    p.scale[c] = 1.f / (255.f * rng.uniform(0.2f, 0.3f));
    p.bias[c] = -rng.uniform(0.3f, 0.6f) * 4.f;
    p.pad[c] = rng.uniform(-1.f, 1.f);
  }
  p.half = half;
  p.channels_first = channels_first;
  f.bytes.resize(size_t(p.row_bytes) * size_t(h));
  for (uint8_t& b : f.bytes) b = static_cast<uint8_t>(rng.integer(0, 255));
  return f;
}

std::string run_on_gpu(const Frame& f, DeviceBuffer* out) {
  DeviceBuffer src(f.bytes.size());
  src.upload(f.bytes.data(), f.bytes.size());
  if (f.p.half) out->poison16(gpu_test::kHalfPoison);
  else out->poison32(gpu_test::kFloatPoison);
  cuda::LaunchChoice choice;
  choice.grid[0] = 7;  // fewer threads than pixels: the kernel strides
  choice.block[0] = cuda::kImagePreprocessBlock;
  cuda::ImagePreprocessArgs args{static_cast<const uint8_t*>(src.get()), out->get()};
  gpu_test::Device* dev = gpu_test::device();
  const gpu_test::cu::Driver& d = *dev->d;
  gpu_test::cu::CUfunction fn = nullptr;
  if (dev->modules.function(cuda::kImagePreprocessKernel, &fn) != JP_OK) return jp_last_error();
  ImagePreprocessParams p = f.p;
  void* argv[] = {&args, &p};
  char text[160];
  namespace cu = gpu_test::cu;
  cu::CUresult r = cu::launch(d, fn, false, choice.grid, choice.block, 0, nullptr, argv);
  if (r == cu::kSuccess) r = d.StreamSynchronize(nullptr);
  return r == cu::kSuccess ? "" : cu::error_text(d, r, text, sizeof text);
}

TEST(GpuImagePreprocess, MatchesCpuTwinOnRandomFrames) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Size { PixelFormat format; int w, h, out_w, out_h; };
  const Size sizes[] = {{PixelFormat::kRgb8, 37, 29, 16, 20},   {PixelFormat::kBgr8, 13, 7, 31, 23},
                        {PixelFormat::kYuyv, 38, 21, 17, 19},   {PixelFormat::kYuyv, 640, 480, 224, 224},
                        {PixelFormat::kRgb8, 1921, 1081, 640, 640}, {PixelFormat::kBgr8, 1, 1, 3, 5}};
  for (const Size& s : sizes) {
    for (int fit = 0; fit < 3; ++fit) {
      for (bool half : {true, false}) {
        for (bool channels_first : {false, true}) {
          const Frame f = random_frame(rng, s.format, s.w, s.h, s.out_w, s.out_h, fit, half,
                                       channels_first);
          const size_t n = size_t(3) * s.out_w * s.out_h;
          std::vector<uint8_t> want(n * (half ? 2 : 4));
          cpu::image_preprocess(f.p, f.bytes.data(), want.data());
          DeviceBuffer out(want.size());
          ASSERT_EQ(run_on_gpu(f, &out), "");
          EXPECT_TRUE(out.guard_intact()) << s.w << "x" << s.h;
          const std::string where = std::to_string(s.w) + "x" + std::to_string(s.h) + " fit " +
                                    std::to_string(fit) + " half " + std::to_string(half) +
                                    " nchw " + std::to_string(channels_first);
          if (half) {
            const std::vector<uint16_t> got = out.download<uint16_t>(n);
            const uint16_t* w = reinterpret_cast<const uint16_t*>(want.data());
            for (size_t i = 0; i < n; ++i) {
              const float g = half_to_float(got[i]);
              ASSERT_FALSE(std::isnan(g)) << where << " element " << i << " not written";
              ASSERT_EQ(got[i], w[i]) << where << " element " << i << ": " << g << ", want "
                                      << half_to_float(w[i]);
            }
          } else {
            const std::vector<float> got = out.download<float>(n);
            const float* w = reinterpret_cast<const float*>(want.data());
            for (size_t i = 0; i < n; ++i)  // NaN (the poison) fails the comparison
              ASSERT_TRUE(got[i] == w[i])
                  << where << " element " << i << ": " << got[i] << ", want " << w[i];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
