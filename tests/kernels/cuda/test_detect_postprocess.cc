// The detector post-processing kernels (kernels/cuda/detect_postprocess.cu) and the per-pixel
// class kernel (kernels/cuda/pixel_argmax.cu) against their CPU twins on fresh random inputs,
// workspace and outputs poisoned, guards checked. Tolerance: none. Both sides of the detector
// run the header's decode (explicit fmaf, detect_exp) and IoU, rank by the same total order and
// sweep the same way, so the detections must be equal bit for bit, in the same order; the
// per-pixel class only compares. Logits are drawn on a coarse grid (1/4, 1/2) so that equal
// scores and logits (ties broken by candidate index, by the lower class) are common.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/detect_postprocess.h"
#include "kernels/pixel_argmax.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
namespace cu = gpu_test::cu;

std::string launch(const char* name, const uint32_t grid, const uint32_t block, void** argv) {
  gpu_test::Device* dev = gpu_test::device();
  cu::CUfunction fn = nullptr;
  if (dev->modules.function(name, &fn) != JP_OK) return jp_last_error();
  const uint32_t g[3] = {grid, 1, 1}, b[3] = {block, 1, 1};
  char text[160];
  cu::CUresult r = cu::launch(*dev->d, fn, false, g, b, 0, nullptr, argv);
  if (r == cu::kSuccess) r = dev->d->StreamSynchronize(nullptr);
  return r == cu::kSuccess ? "" : std::string(name) + ": " + cu::error_text(*dev->d, r, text, sizeof text);
}

std::vector<float> random_head(test_util::SeededRng& rng, const DetectParams& p) {
  std::vector<float> head(size_t(detect_cells(p)) * size_t(5 + p.classes));
  for (size_t i = 0; i < head.size(); ++i) {
    const size_t k = p.channels_last ? i % size_t(5 + p.classes) : i / size_t(detect_cells(p));
    const float range = k == 0 ? 4.f : (k >= 3 && k <= 4 ? 1.5f : 3.f);
    head[i] = float(rng.integer(int64_t(-4 * range), int64_t(4 * range))) / 4.f;
  }
  return head;
}

TEST(GpuDetectPostprocess, MatchesCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Shape { int32_t gw, gh, classes, max_candidates, max_detections; float score, iou; };
  const Shape shapes[] = {{4, 4, 2, 100, 100, 0.05f, 0.3f},   {13, 7, 3, 50, 20, 0.2f, 0.45f},
                          {20, 20, 80, 300, 100, 0.01f, 0.5f}, {80, 80, 3, 1000, 300, 0.3f, 0.6f},
                          {1, 1, 1, 1, 1, 0.f, 0.f},           {40, 30, 5, 4000, 2000, 0.f, 0.7f}};
  for (const Shape& s : shapes) {
    for (bool last : {false, true}) {
      DetectParams p;
      p.grid_w = s.gw;
      p.grid_h = s.gh;
      p.classes = s.classes;
      p.channels_last = last;
      p.stride = 8.f;
      p.image_w = 8.f * s.gw;
      p.image_h = 8.f * s.gh - 3.f;  // clipping differs per axis
      p.score_threshold = s.score;
      p.iou_threshold = s.iou;
      p.max_candidates = s.max_candidates;
      p.max_detections = s.max_detections;
      const std::vector<float> head = random_head(rng, p);
      const size_t ws_bytes = detect_workspace(p).bytes;
      std::vector<unsigned char> ws(ws_bytes + 16);
      void* aligned = ws.data() + (16 - reinterpret_cast<uintptr_t>(ws.data()) % 16) % 16;
      std::vector<Detection> want(size_t(p.max_detections));
      const int32_t want_n = cpu::detect_postprocess(p, head.data(), aligned, want.data());

      DeviceBuffer d_head(head.size() * 4), d_ws(ws_bytes), d_out(want.size() * sizeof(Detection)),
          d_count(4);
      d_head.upload(head.data(), head.size() * 4);
      d_ws.poison32(gpu_test::kFloatPoison);
      d_out.poison32(gpu_test::kFloatPoison);
      d_count.poison32(0xdeadbeefu);
      cuda::DetectArgs args{static_cast<const float*>(d_head.get()), d_ws.get(),
                            static_cast<Detection*>(d_out.get()), static_cast<int32_t*>(d_count.get())};
      void* argv[] = {&args, &p};
      ASSERT_EQ(launch(cuda::kDetectDecodeKernel, 7, cuda::kDetectBlock, argv), "");
      ASSERT_EQ(launch(cuda::kDetectCompactKernel, 1, cuda::kDetectCompactBlock, argv), "");
      ASSERT_EQ(launch(cuda::kDetectRankKernel, 5, cuda::kDetectBlock, argv), "");
      ASSERT_EQ(launch(cuda::kDetectNmsKernel, 1, cuda::kDetectBlock, argv), "");
      const std::string where = std::to_string(s.gw) + "x" + std::to_string(s.gh) + "x" +
                                std::to_string(s.classes) + (last ? " channels last" : "");
      EXPECT_TRUE(d_ws.guard_intact() && d_out.guard_intact() && d_count.guard_intact()) << where;
      const int32_t got_n = d_count.download<int32_t>(1)[0];
      ASSERT_EQ(got_n, want_n) << where;
      EXPECT_GT(want_n, 0) << where << ": a case that tests nothing";
      const std::vector<Detection> got = d_out.download<Detection>(size_t(got_n));
      for (int32_t i = 0; i < got_n; ++i) {
        const Detection& g = got[size_t(i)];
        const Detection& w = want[size_t(i)];
        EXPECT_EQ(std::memcmp(&g, &w, sizeof g), 0)
            << where << " detection " << i << ": got " << g.index << " " << g.score << " ["
            << g.x0 << " " << g.y0 << " " << g.x1 << " " << g.y1 << "], want " << w.index << " "
            << w.score << " [" << w.x0 << " " << w.y0 << " " << w.x1 << " " << w.y1 << "]";
      }
    }
  }
}

TEST(GpuPixelArgmax, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Shape { int32_t classes, h, w; };
  for (const Shape s : {Shape{21, 64, 48}, Shape{1, 3, 5}, Shape{2, 257, 129}, Shape{150, 33, 17}}) {
    for (bool last : {false, true}) {
      PixelArgmaxParams p{s.classes, s.h, s.w, last};
      std::vector<float> logits(size_t(s.classes) * size_t(s.h) * size_t(s.w));
      for (float& v : logits) v = float(rng.integer(-8, 8)) / 2.f;  // ties are common
      const size_t pixels = size_t(s.h) * size_t(s.w);
      std::vector<int32_t> want(pixels);
      cpu::pixel_argmax(p, logits.data(), want.data());
      DeviceBuffer d_logits(logits.size() * 4), d_out(pixels * 4);
      d_logits.upload(logits.data(), logits.size() * 4);
      d_out.poison32(0xdeadbeefu);  // not a class
      cuda::PixelArgmaxArgs args{static_cast<const float*>(d_logits.get()),
                                 static_cast<int32_t*>(d_out.get())};
      void* argv[] = {&args, &p};
      ASSERT_EQ(launch(cuda::kPixelArgmaxKernel, 3, cuda::kPixelArgmaxBlock, argv), "");
      EXPECT_TRUE(d_out.guard_intact());
      EXPECT_EQ(d_out.download<int32_t>(pixels), want) << s.classes << " classes, last " << last;
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
