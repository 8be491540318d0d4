// CUDA GridSample (kernels/cuda/grid_sample.cu) against its CPU twin (kernels/cpu/grid_sample.cc)
// on fresh random X and grids (coordinates to 1.3 past the borders, so every padding reflects
// or clamps some), every mode, padding and align_corners, 1 to 3 spatial dims: a deformable
// attention level (many positions, 32 channels), a spatial transformer's image, a large image
// (W 1000: Float32 coordinates matter), a volume and channel counts that leave a partial run of
// 8. Both compute the same taps, weights and float32 sums (grid_sample_math), so Float32 Y must
// match within 1e-6 relative and absolute (bit for bit expected; the margin allows a denormal
// the device flushes) and Float16 Y (X rounded to half for the twin too) within one output
// rounding, 1e-3 relative and absolute. Outputs poisoned, guards checked, NaN never passes.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kGridSample = static_cast<uint16_t>(OpFamilyId::kGridSample);

struct Case {
  std::vector<int64_t> x;    // [N, C, *in]
  std::vector<int64_t> out;  // Y's spatial dims
};

const Case kCases[] = {
    {{2, 32, 20, 25}, {300, 4}},     // deformable attention: queries x points on one level
    {{1, 3, 48, 64}, {48, 64}},      // a spatial transformer's warp
    {{1, 5, 8, 1000}, {3, 77}},      // a large image (partial channel run)
    {{1, 9, 4, 5, 6}, {3, 4, 5}},    // volumetric
    {{3, 2, 11}, {13}},              // 1-D
};

GridSampleParams params_of(const Case& c, GridSampleMode mode, GridSamplePadding padding,
                           bool align) {
  GridSampleParams p;
  p.mode = mode;
  p.padding = padding;
  p.align_corners = align;
  p.spatial = static_cast<int32_t>(c.x.size()) - 2;
  p.batch = c.x[0];
  p.channels = c.x[1];
  for (int d = 0; d < p.spatial; ++d) {
    p.in[kGridSampleMaxSpatial - p.spatial + d] = c.x[2 + d];
    p.out[kGridSampleMaxSpatial - p.spatial + d] = c.out[static_cast<size_t>(d)];
  }
  return p;
}

TEST(GpuGridSample, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : kCases) {
    int64_t positions = 1;
    for (int64_t e : c.out) positions *= e;
    const int64_t r = static_cast<int64_t>(c.x.size()) - 2;
    const int64_t nx = test_util::volume(c.x), ny = c.x[0] * c.x[1] * positions;
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      std::vector<float> x = rng.uniform(nx, -2.f, 2.f);
      const std::vector<float> grid = rng.uniform(c.x[0] * positions * r, -1.3f, 1.3f);
      const auto dx = gpu_test::upload_rounded(&x, dtype);
      const auto dgrid = gpu_test::to_device(grid, DType::kFloat32);
      for (GridSampleMode mode :
           {GridSampleMode::kLinear, GridSampleMode::kNearest, GridSampleMode::kCubic})
        for (GridSamplePadding padding : {GridSamplePadding::kZeros, GridSamplePadding::kBorder,
                                          GridSamplePadding::kReflection})
          for (bool align : {false, true}) {
            const GridSampleParams p = params_of(c, mode, padding, align);
            std::vector<float> want(static_cast<size_t>(ny));
            cpu::grid_sample(p, x.data(), grid.data(), want.data());
            if (dtype == DType::kFloat16) want = gpu_test::round_half(want);
            DeviceBuffer dy(static_cast<size_t>(ny) * gpu_test::float_storage_bytes(dtype));
            gpu_test::poison(dy, dtype);
            ASSERT_EQ(gpu_test::select_and_launch(kGridSample, dtype,
                                                  gpu_test::step_pointers({dx.get(), dgrid.get()}, dy),
                                                  p),
                      "");
            const double tol = dtype == DType::kFloat16 ? 1e-3 : 1e-6;
            EXPECT_TRUE(gpu_test::all_close(
                gpu_test::download_floats(dy, static_cast<size_t>(ny), dtype), want, tol, tol))
                << test_util::shape_str(c.x) << " mode " << int(mode) << " padding "
                << int(padding) << " align " << align << " f16 " << (dtype == DType::kFloat16);
            EXPECT_TRUE(dy.guard_intact());
          }
    }
  }
}

// Selection needs no GPU: X's dtype picks the variant; a grid known not to be Float32 is refused.
TEST(GpuGridSample, SelectorReadsAFloat32Grid) {
  const GridSampleParams p = params_of(kCases[0], GridSampleMode::kLinear,
                                       GridSamplePadding::kZeros, false);
  const cuda::TargetInfo target = gpu_test::target_with(132);
  for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
    cuda::StepDesc step = gpu_test::step_of(kGridSample, &p, dtype);
    step.num_inputs = 2;
    step.input_dtypes[0] = dtype;
    step.input_dtypes[1] = DType::kFloat32;
    cuda::LaunchChoice choice;
    std::string why;
    ASSERT_TRUE(cuda::select_kernel(step, target, &choice, &why)) << why;
    EXPECT_STREQ(choice.variant->name,
                 dtype == DType::kFloat16 ? "jp_grid_sample_f16" : "jp_grid_sample_f32");
    step.input_dtypes[1] = DType::kFloat16;
    EXPECT_FALSE(cuda::select_kernel(step, target, &choice, &why));
    EXPECT_NE(why.find("Float32 grid"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace jetplan::kernels
