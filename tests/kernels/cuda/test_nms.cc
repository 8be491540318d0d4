// CUDA NonMaxSuppression (kernels/cuda/nms.cu) against its CPU twin (kernels/cpu/nms.cc): the
// selected rows, the -1 rows past them and the count equal exactly. Fresh random inputs: boxes
// clustered so that many overlap, corners in either order or centre format, coordinates on a
// quarter grid (IoU lands exactly on thresholds such as 0.5, where > and >= differ), duplicated
// boxes, boxes of no area; scores with ties (small integers), NaNs and a threshold or none; one
// class to 80, one batch or several, max_output_per_class from 1 to all boxes. Each case runs
// with the sort keys in shared memory (the selector's choice on this GPU) and in the workspace
// (a target without the shared memory, and 3 SMs, so blocks take several segments each).
// Outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kNms = static_cast<uint16_t>(OpFamilyId::kNms);

struct Case {
  int64_t batch, classes, boxes, max_out;
  float iou;
  bool threshold, center, grid;
};

// Boxes around a few centres, so that neighbours overlap; on a quarter grid when `grid`.
std::vector<float> random_boxes(test_util::SeededRng& rng, const Case& c) {
  std::vector<float> b(static_cast<size_t>(c.batch * c.boxes * 4));
  for (int64_t i = 0; i < c.batch * c.boxes; ++i) {
    float* box = &b[static_cast<size_t>(i * 4)];
    if (i % c.boxes > 0 && rng.below(8) == 0) {  // a duplicate of the box before
      for (int k = 0; k < 4; ++k) box[k] = box[k - 4];
      continue;
    }
    const float cx = static_cast<float>(rng.below(4)) * 2.f + rng.uniform(-1.f, 1.f);
    const float cy = static_cast<float>(rng.below(4)) * 2.f + rng.uniform(-1.f, 1.f);
    float w = rng.uniform(0.f, 2.f), h = rng.uniform(0.f, 2.f);
    if (rng.below(16) == 0) w = 0.f;  // no area: never suppresses
    float v[4];
    if (c.center) {
      v[0] = cx, v[1] = cy, v[2] = w, v[3] = h;
    } else {
      v[0] = cy - h / 2, v[1] = cx - w / 2, v[2] = cy + h / 2, v[3] = cx + w / 2;
      if (rng.coin()) std::swap(v[0], v[2]);  // any two opposite corners
      if (rng.coin()) std::swap(v[1], v[3]);
    }
    for (int k = 0; k < 4; ++k) box[k] = c.grid ? std::round(v[k] * 4.f) / 4.f : v[k];
  }
  return b;
}

std::vector<float> random_scores(test_util::SeededRng& rng, const Case& c) {
  const int64_t n = c.batch * c.classes * c.boxes;
  std::vector<float> s = rng.coin() ? rng.integers(n, -2, 6) : rng.uniform(n, -1.f, 1.f);
  for (int64_t i = 5; i < n; i += 23) s[static_cast<size_t>(i)] = std::nanf("");
  for (int64_t i = 7; i < n; i += 31) s[static_cast<size_t>(i)] = -0.f;  // ties +0
  return s;
}

TEST(GpuNms, MatchesCpuTwinExactly) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Case cases[] = {{1, 1, 10, 10, 0.5f, false, false, true},
                        {2, 3, 300, 20, 0.4f, true, true, false},
                        {2, 3, 300, 300, 0.5f, false, false, true},
                        {1, 80, 2000, 100, 0.45f, true, false, false},
                        {1, 2, 9000, 9000, 0.7f, false, false, false},
                        {3, 5, 513, 1, 0.f, false, true, true},
                        {1, 1, 1, 4, 0.5f, true, false, false}};
  cuda::TargetInfo no_shared = gpu_test::device_target();
  no_shared.max_shared_per_block = 1024;
  no_shared.sm_count = 3;
  for (const Case& c : cases) {
    const std::vector<float> boxes = random_boxes(rng, c);
    const std::vector<float> scores = random_scores(rng, c);
    NmsParams p;
    p.batch = c.batch;
    p.num_classes = c.classes;
    p.num_boxes = c.boxes;
    p.max_output_per_class = c.max_out;
    p.iou_threshold = c.iou;
    p.has_score_threshold = c.threshold;
    p.score_threshold = c.threshold ? 0.25f : 0.f;
    p.center_point_box = c.center;
    const int64_t rows = nms_capacity(p);
    std::vector<int64_t> want(static_cast<size_t>(rows * 3));
    std::vector<unsigned char> ws(static_cast<size_t>(cpu::nms_workspace_bytes(p)) + 8);
    int64_t want_count = -7;
    cpu::non_max_suppression(p, boxes.data(), scores.data(), ws.data(), want.data(), &want_count);
    auto d_boxes = gpu_test::to_device(boxes, DType::kFloat32);
    auto d_scores = gpu_test::to_device(scores, DType::kFloat32);
    for (const cuda::TargetInfo* target : {static_cast<const cuda::TargetInfo*>(nullptr),
                                           static_cast<const cuda::TargetInfo*>(&no_shared)}) {
      SCOPED_TRACE(::testing::Message()
                   << c.batch << "x" << c.classes << "x" << c.boxes << " max " << c.max_out
                   << " iou " << c.iou << " center " << c.center << " grid " << c.grid
                   << (target ? " keys in the workspace" : " keys in shared memory"));
      DeviceBuffer selected(static_cast<size_t>(std::max<int64_t>(rows, 1) * 3 * 8));
      DeviceBuffer count(8);
      selected.poison32(gpu_test::kFloatPoison);
      count.poison32(gpu_test::kFloatPoison);
      cuda::StepPointers ptrs = gpu_test::step_pointers({d_boxes.get(), d_scores.get()}, selected);
      ptrs.out[1] = count.get();
      cuda::LaunchChoice chosen;
      ASSERT_EQ(gpu_test::select_and_launch(kNms, DType::kFloat32, ptrs, p, &chosen, target), "");
      EXPECT_EQ(chosen.shared_bytes > 0, target == nullptr);
      EXPECT_EQ(count.download<int64_t>(1)[0], want_count);
      const std::vector<int64_t> got = selected.download<int64_t>(want.size());
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "row " << i / 3 << " column " << i % 3 << " of "
                                   << want_count << " selected";
      EXPECT_TRUE(selected.guard_intact());
      EXPECT_TRUE(count.guard_intact());
    }
  }
}

// A selector's refusals name the reason: Float16 scores.
TEST(GpuNms, SelectorRefusesFloat16) {
  NmsParams p;
  p.num_boxes = 4;
  p.max_output_per_class = 2;
  cuda::LaunchChoice choice;
  std::string why;
  EXPECT_FALSE(cuda::select_kernel(gpu_test::step_of(kNms, &p, DType::kFloat16),
                                   gpu_test::target_with(132), &choice, &why));
  EXPECT_NE(why.find("Float32"), std::string::npos) << why;
}

}  // namespace
}  // namespace jetplan::kernels
