// CUDA LRN (kernels/cuda/lrn.cu) against its CPU twin (kernels/cpu/lrn.cc; sums in double) on
// fresh random inputs (FP16 inputs rounded for the twin too): AlexNet's and GoogLeNet's window
// of 5, even and unit windows, a window wider than the channels. Tolerance: FP16 |got - want| <=
// 2e-3 * |want| + 2e-3 (output rounding 2^-11); FP32 1e-5 * |want| + 1e-6 (FP32 sums and
// powf). NaN never passes; outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kLrn = static_cast<uint16_t>(OpFamilyId::kLrn);

TEST(GpuLrn, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t batch, channels, spatial, size; float alpha, beta, bias; };
  const Case cases[] = {{1, 96, 27 * 27, 5, 1e-4f, 0.75f, 1.f},  // AlexNet
                        {2, 64, 56, 5, 1e-4f, 0.75f, 2.f},
                        {1, 7, 33, 4, 0.5f, 0.6f, 1.f},       // an even window
                        {3, 5, 9, 1, 1e-2f, 1.f, 0.5f},
                        {1, 3, 10, 11, 2e-1f, 0.75f, 1.f}};   // wider than the channels
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
      LrnParams p;
      p.batch = c.batch;
      p.channels = c.channels;
      p.spatial = c.spatial;
      p.size = c.size;
      p.alpha = c.alpha;
      p.beta = c.beta;
      p.bias = c.bias;
      const int64_t n = c.batch * c.channels * c.spatial;
      std::vector<float> x = rng.uniform(n, -3.f, 3.f);
      auto dx = gpu_test::upload_rounded(&x, dtype);
      std::vector<float> want(static_cast<size_t>(n));
      cpu::lrn(p, x.data(), want.data());
      DeviceBuffer dy(n * gpu_test::float_storage_bytes(dtype));
      gpu_test::poison(dy, dtype);
      const cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get()}, dy);
      ASSERT_EQ(gpu_test::select_and_launch(kLrn, dtype, ptrs, p), "");
      const bool f16 = dtype == DType::kFloat16;
      EXPECT_TRUE(gpu_test::all_close(gpu_test::download_floats(dy, size_t(n), dtype), want,
                                      f16 ? 2e-3 : 1e-5, f16 ? 2e-3 : 1e-6))
          << c.channels << " channels, size " << c.size;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
