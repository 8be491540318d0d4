// CUDA BatchNorm and LayerNorm (kernels/cuda/batch_norm.cu, layer_norm.cu) against their CPU twins
// (kernels/cpu/batch_norm.cc, layer_norm.cc). Every tensor of the step has the step's dtype (the
// twin reads the same values rounded to FP16). Tolerance: FP16 |got - want| <= 2e-3 * |want| +
// 2e-3 (output rounding 2^-11 plus FP32 statistics); FP32 1e-5 * |want| + 1e-5. NaN never
// passes; outputs poisoned, guards checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kBatchNorm = static_cast<uint16_t>(OpFamilyId::kBatchNorm);

TEST(GpuBatchNorm, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { int64_t batch, channels, spatial; };
  for (const Case& c : {Case{1, 64, 56 * 56}, Case{8, 67, 13 * 11}, Case{8, 3, 1}, Case{1, 1, 7}}) {
    for (bool channels_last : {true, false}) {
      for (DType dtype : {DType::kFloat16, DType::kFloat32}) {
        BatchNormParams p;
        p.batch = c.batch;
        p.channels = c.channels;
        p.spatial = c.spatial;
        p.epsilon = 1e-3f;
        p.channels_last = channels_last;
        const int64_t n = c.batch * c.channels * c.spatial;
        std::vector<float> x = rng.uniform(n, -3.f, 3.f), scale = rng.uniform(c.channels, -2.f, 2.f),
                           bias = rng.uniform(c.channels, -1.f, 1.f),
                           mean = rng.uniform(c.channels, -1.f, 1.f),
                           var = rng.uniform(c.channels, 0.05f, 2.f);
        auto dx = gpu_test::upload_rounded(&x, dtype), ds = gpu_test::upload_rounded(&scale, dtype), db = gpu_test::upload_rounded(&bias, dtype),
             dm = gpu_test::upload_rounded(&mean, dtype), dv = gpu_test::upload_rounded(&var, dtype);
        std::vector<float> want(n);
        cpu::batch_norm(p, x.data(), scale.data(), bias.data(), mean.data(), var.data(),
                        want.data());
        DeviceBuffer dy(n * gpu_test::float_storage_bytes(dtype));
        gpu_test::poison(dy, dtype);
        cuda::StepPointers ptrs =
            gpu_test::step_pointers({dx.get(), ds.get(), db.get(), dm.get(), dv.get()}, dy);
        ASSERT_EQ(gpu_test::select_and_launch(kBatchNorm, dtype, ptrs, p), "");
        EXPECT_TRUE(gpu_test::close_to_twin(dy, want, dtype))
            << c.batch << "x" << c.channels << "x" << c.spatial << " nhwc " << channels_last;
        EXPECT_TRUE(dy.guard_intact());
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
