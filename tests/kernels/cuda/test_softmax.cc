// CUDA softmax (kernels/cuda/softmax.cu) against its CPU twin (kernels/cpu/softmax.cc), FP16
// and FP32 storage. Tolerance: FP16 |got - want| <= 2e-3 * |want| + 2e-3 (output rounding plus
// FP32 fast exp); FP32 1e-5 * |want| + 1e-6 for softmax, + 2e-5 absolute for log-softmax.
// NaN never passes; outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kSoftmax = static_cast<uint16_t>(OpFamilyId::kSoftmax);

struct SoftmaxCase {
  int64_t outer, axis, inner;
};

void check(test_util::SeededRng& rng, const SoftmaxCase& c, bool log, DType dtype) {
  const bool f16 = dtype == DType::kFloat16;
  SoftmaxParams p;
  p.outer = c.outer;
  p.axis = c.axis;
  p.inner = c.inner;
  p.log = log;
  const int64_t n = c.outer * c.axis * c.inner;
  std::vector<float> x = gpu_test::as_stored(rng.uniform(n, -8.f, 8.f), f16);
  std::vector<float> want(n);
  cpu::softmax(p, x.data(), want.data());
  const gpu_test::FloatStepResult got = gpu_test::run_float_step(kSoftmax, dtype, p, x, n);
  ASSERT_EQ(got.status, "");
  EXPECT_EQ(std::string(got.chosen.variant->name).find("rows") != std::string::npos, c.inner == 1);
  const double rel = f16 ? 2e-3 : 1e-5, abs = f16 ? 2e-3 : (log ? 2e-5 : 1e-6);
  ASSERT_TRUE(gpu_test::all_close(got.y, want, rel, abs))
      << "(" << c.outer << ", " << c.axis << ", " << c.inner << ") log " << log << " f16 " << f16;
  EXPECT_TRUE(got.guard_intact);
}

TEST(GpuSoftmax, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const SoftmaxCase cases[] = {
      {1, 1000, 1},            // classifier head, batch 1
      {8, 1000, 1},            // batch 8
      {8 * 12 * 197, 197, 1},  // ViT-B attention rows
      {3, 5000, 1},            // long rows
      {7, 1, 1},               // axis of one
      {2, 21, 13 * 17},        // segmentation logits over channels (NCHW)
      {5, 3, 7},
      {1, 37, 1},
  };
  for (const SoftmaxCase& c : cases)
    for (bool log : {false, true})
      for (DType dtype : {DType::kFloat16, DType::kFloat32}) check(rng, c, log, dtype);
}

TEST(GpuSoftmax, RowsKernelSameBitsTwice) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  SoftmaxParams p;
  p.outer = 64;
  p.axis = 777;
  const int64_t n = p.outer * p.axis;
  const std::vector<float> x = rng.uniform(n, -8.f, 8.f);
  DeviceBuffer dx(n * 4), dy(n * 4);
  dx.upload(x.data(), n * 4);
  cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
  ASSERT_EQ(gpu_test::select_and_launch(kSoftmax, DType::kFloat32, ptrs, p), "");
  const std::vector<uint8_t> first = dy.download_all();
  dy.poison32(gpu_test::kFloatPoison);
  ASSERT_EQ(gpu_test::select_and_launch(kSoftmax, DType::kFloat32, ptrs, p), "");
  EXPECT_EQ(dy.download_all(), first);
}


// masked_rows_zero: rows of -inf among random ones give 0 (log: -inf) on both kernels, as the
// twin; the other rows within the tolerance above.
TEST(GpuSoftmax, MaskedRowsGiveZeroLikeTheTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const SoftmaxCase& c : {SoftmaxCase{6, 40, 1}, SoftmaxCase{6, 5, 3}}) {
    for (bool log : {false, true}) {
      for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
        const bool f16 = dtype == DType::kFloat16;
        SoftmaxParams p;
        p.outer = c.outer;
        p.axis = c.axis;
        p.inner = c.inner;
        p.log = log;
        p.masked_rows_zero = true;
        std::vector<float> x = gpu_test::as_stored(rng.uniform(c.outer * c.axis * c.inner, -8.f, 8.f), f16);
        for (int64_t o = 0; o < c.outer; o += 2)  // every other outer row fully masked
          for (int64_t j = 0; j < c.axis * c.inner; ++j) x[size_t(o * c.axis * c.inner + j)] = -INFINITY;
        std::vector<float> want(x.size());
        cpu::softmax(p, x.data(), want.data());
        const gpu_test::FloatStepResult got =
            gpu_test::run_float_step(kSoftmax, dtype, p, x, int64_t(x.size()));
        ASSERT_EQ(got.status, "");
        for (size_t i = 0; i < want.size(); ++i) {
          if (std::isinf(want[i])) {
            EXPECT_EQ(got.y[i], want[i]) << i;
            continue;
          }
          ASSERT_FALSE(std::isnan(got.y[i])) << i;
          EXPECT_LE(std::fabs(got.y[i] - want[i]), (f16 ? 2e-3 : 2e-5) * (1 + std::fabs(want[i]))) << i;
        }
        EXPECT_TRUE(got.guard_intact);
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
