// CUDA RoiPool (kernels/cuda/roi_pool.cu) against its CPU twin (kernels/cpu/roi_pool.cc) on
// fresh random X and boxes: a Faster R-CNN head (7x7 bins, sampling_ratio 2, spatial_scale 1/16
// of image coordinates), a Mask R-CNN head (14x14, adaptive grids), a small odd case, and
// MaxRoiPool; every RoiAlign mode and coordinate mode. Boxes reach past X, some are malformed
// (x2 < x1) and some batch indices lie outside the batch (zeros). Both compute the same taps,
// weights and float32 sums (roi_pool_math), so Float32 Y must match within 1e-6 relative and
// absolute (bit for bit expected; the margin allows a denormal the device flushes) and Float16
// Y (X rounded to half for the twin too) within one output rounding, 1e-3 relative and
// absolute. Outputs poisoned, guards checked, NaN never passes.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kRoiPool = static_cast<uint16_t>(OpFamilyId::kRoiPool);

struct Case {
  RoiPoolMode mode;  // kAlignAvg: both RoiAlign modes run
  int64_t n, c, h, w, rois, out_h, out_w, sampling_ratio;
  float spatial_scale;
};

const Case kCases[] = {
    {RoiPoolMode::kAlignAvg, 2, 64, 50, 68, 300, 7, 7, 2, 0.0625f},  // Faster R-CNN box head
    {RoiPoolMode::kAlignAvg, 1, 32, 25, 34, 50, 14, 14, 0, 0.03125f},  // Mask R-CNN, adaptive
    {RoiPoolMode::kAlignAvg, 3, 5, 7, 9, 17, 3, 2, 0, 1.f},            // odd sizes
    {RoiPoolMode::kMax, 2, 16, 38, 50, 64, 6, 6, 0, 0.0625f},          // MaxRoiPool
    {RoiPoolMode::kMax, 3, 5, 7, 9, 17, 3, 2, 0, 1.f},
};

RoiPoolParams params_of(const Case& c, RoiPoolMode mode, bool half_pixel) {
  RoiPoolParams p;
  p.mode = mode;
  p.half_pixel = half_pixel;
  p.sampling_ratio = c.sampling_ratio;
  p.spatial_scale = c.spatial_scale;
  p.batch = c.n;
  p.channels = c.c;
  p.height = c.h;
  p.width = c.w;
  p.rois = c.rois;
  p.out_h = c.out_h;
  p.out_w = c.out_w;
  return p;
}

// Boxes in the coordinates spatial_scale maps onto X, reaching a quarter past each side; every
// fifth malformed. RoiAlign's batch indices from -1 to N (one in eight outside), MaxRoiPool's
// first column fractional, outside the batch as often.
void random_boxes(test_util::SeededRng& rng, const Case& c, std::vector<float>* rois,
                  std::vector<int64_t>* batch) {
  const float sw = static_cast<float>(c.w) / c.spatial_scale;
  const float sh = static_cast<float>(c.h) / c.spatial_scale;
  for (int64_t i = 0; i < c.rois; ++i) {
    const float x1 = rng.uniform(-0.25f * sw, sw), y1 = rng.uniform(-0.25f * sh, sh);
    const bool bad = i % 5 == 0;
    const float x2 = bad ? x1 - rng.uniform(0, 0.1f * sw) : x1 + rng.uniform(0, 0.6f * sw);
    const float y2 = bad ? y1 - rng.uniform(0, 0.1f * sh) : y1 + rng.uniform(0, 0.6f * sh);
    const int64_t b = rng.below(8) == 0 ? (rng.coin() ? -1 : c.n) : rng.integer(0, c.n - 1);
    if (c.mode == RoiPoolMode::kMax) {
      rois->insert(rois->end(), {static_cast<float>(b) + rng.uniform(-0.9f, 0.9f), x1, y1, x2, y2});
    } else {
      rois->insert(rois->end(), {x1, y1, x2, y2});
      batch->push_back(b);
    }
  }
}

TEST(GpuRoiPool, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : kCases) {
    std::vector<float> rois;
    std::vector<int64_t> batch;
    random_boxes(rng, c, &rois, &batch);
    const auto drois = gpu_test::to_device(rois, DType::kFloat32);
    DeviceBuffer dbatch(std::max<size_t>(batch.size(), 1) * sizeof(int64_t));
    if (!batch.empty()) dbatch.upload(batch.data(), batch.size() * sizeof(int64_t));
    const int64_t ny = c.rois * c.c * c.out_h * c.out_w;
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      std::vector<float> x = rng.uniform(c.n * c.c * c.h * c.w, -2.f, 2.f);
      const auto dx = gpu_test::upload_rounded(&x, dtype);
      const std::vector<RoiPoolMode> modes =
          c.mode == RoiPoolMode::kMax
              ? std::vector<RoiPoolMode>{RoiPoolMode::kMax}
              : std::vector<RoiPoolMode>{RoiPoolMode::kAlignAvg, RoiPoolMode::kAlignMax};
      for (RoiPoolMode mode : modes)
        for (bool half_pixel : {false, true}) {
          if (mode == RoiPoolMode::kMax && half_pixel) continue;
          const RoiPoolParams p = params_of(c, mode, half_pixel);
          std::vector<float> want(static_cast<size_t>(ny));
          cpu::roi_pool(p, x.data(), rois.data(), batch.empty() ? nullptr : batch.data(),
                        want.data());
          if (dtype == DType::kFloat16) want = gpu_test::round_half(want);
          DeviceBuffer dy(static_cast<size_t>(ny) * gpu_test::float_storage_bytes(dtype));
          gpu_test::poison(dy, dtype);
          const cuda::StepPointers ptrs =
              mode == RoiPoolMode::kMax
                  ? gpu_test::step_pointers({dx.get(), drois.get()}, dy)
                  : gpu_test::step_pointers({dx.get(), drois.get(), &dbatch}, dy);
          ASSERT_EQ(gpu_test::select_and_launch(kRoiPool, dtype, ptrs, p), "");
          const double tol = dtype == DType::kFloat16 ? 1e-3 : 1e-6;
          EXPECT_TRUE(gpu_test::all_close(
              gpu_test::download_floats(dy, static_cast<size_t>(ny), dtype), want, tol, tol))
              << "n " << c.n << " c " << c.c << " " << c.h << "x" << c.w << " rois " << c.rois
              << " mode " << int(mode) << " half_pixel " << half_pixel << " f16 "
              << (dtype == DType::kFloat16);
          EXPECT_TRUE(dy.guard_intact());
        }
    }
  }
}

// Selection needs no GPU: X's dtype picks the variant; rois known not to be Float32, batch
// indices not Int64, or a missing input are refused.
TEST(GpuRoiPool, SelectorReadsFloat32RoisAndInt64Indices) {
  const RoiPoolParams p = params_of(kCases[0], RoiPoolMode::kAlignAvg, true);
  const cuda::TargetInfo target = gpu_test::target_with(132);
  for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
    cuda::StepDesc step = gpu_test::step_of(kRoiPool, &p, dtype);
    step.num_inputs = 3;
    step.input_dtypes[0] = dtype;
    step.input_dtypes[1] = DType::kFloat32;
    step.input_dtypes[2] = DType::kInt64;
    cuda::LaunchChoice choice;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, target, &choice, &why)) << why;
    EXPECT_STREQ(choice.variant->name,
                 dtype == DType::kFloat16 ? "jp_roi_pool_f16" : "jp_roi_pool_f32");
    step.input_dtypes[1] = DType::kFloat16;
    EXPECT_FALSE(cuda::select_kernel(step, target, &choice, &why));
    EXPECT_NE(why.find("Float32 rois"), std::string::npos) << why;
    step.input_dtypes[1] = DType::kFloat32;
    step.input_dtypes[2] = DType::kInt32;
    EXPECT_FALSE(cuda::select_kernel(step, target, &choice, &why));
    EXPECT_NE(why.find("Int64 batch indices"), std::string::npos) << why;
    step.num_inputs = 2;
    EXPECT_FALSE(cuda::select_kernel(step, target, &choice, &why));
  }
}

}  // namespace
}  // namespace jetplan::kernels
