// CUDA InstanceNorm and GroupNorm (kernels/cuda/instance_norm.cu, group_norm.cu: one block per
// row, FP32 statistics, norm_rows.cuh) against their CPU twins (kernels/cpu/instance_norm.cc,
// group_norm.cc; statistics in double). Every tensor of the step has the step's dtype (the twin
// reads the same values rounded to FP16). Fresh random inputs with an offset mean (the two-pass
// variance), outputs poisoned, guards checked. Tolerance: FP16 |got - want| <= 2e-3 * |want| +
// 2e-3 (output rounding 2^-11 plus FP32 statistics); FP32 1e-5 * |want| + 1e-5, loosened to 1e-4
// where a row holds 2^14 elements or more (FP32 sums of that many). NaN never passes.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kInstanceNorm = static_cast<uint16_t>(OpFamilyId::kInstanceNorm);
constexpr uint16_t kGroupNorm = static_cast<uint16_t>(OpFamilyId::kGroupNorm);

struct NormCase {
  int64_t batch, channels, spatial, groups;  // groups 0: InstanceNorm
  bool affine_per_group;
  ActivationKind act;
};

// Runs one case of either family in `dtype` against the twin.
void expect_matches_twin(const NormCase& c, DType dtype, test_util::SeededRng& rng) {
  const int64_t n = c.batch * c.channels * c.spatial;
  const int64_t affine = c.affine_per_group ? c.groups : c.channels;
  std::vector<float> x = rng.uniform(n, 2.f, 6.f), scale = rng.uniform(affine, -2.f, 2.f),
                     bias = rng.uniform(affine, -1.f, 1.f);
  auto dx = gpu_test::upload_rounded(&x, dtype), ds = gpu_test::upload_rounded(&scale, dtype),
       db = gpu_test::upload_rounded(&bias, dtype);
  std::vector<float> want(n);
  DeviceBuffer dy(n * gpu_test::float_storage_bytes(dtype));
  gpu_test::poison(dy, dtype);
  const cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get(), ds.get(), db.get()}, dy);
  Activation act;
  act.kind = c.act;
  if (c.groups == 0) {
    InstanceNormParams p;
    p.batch = c.batch;
    p.channels = c.channels;
    p.spatial = c.spatial;
    p.act = act;
    cpu::instance_norm(p, x.data(), scale.data(), bias.data(), want.data());
    ASSERT_EQ(gpu_test::select_and_launch(kInstanceNorm, dtype, ptrs, p), "");
  } else {
    GroupNormParams p;
    p.batch = c.batch;
    p.channels = c.channels;
    p.spatial = c.spatial;
    p.groups = c.groups;
    p.affine_per_group = c.affine_per_group;
    p.act = act;
    cpu::group_norm(p, x.data(), scale.data(), bias.data(), want.data());
    ASSERT_EQ(gpu_test::select_and_launch(kGroupNorm, dtype, ptrs, p), "");
  }
  const int64_t row = c.spatial * (c.groups == 0 ? 1 : c.channels / c.groups);
  const double tol = dtype == DType::kFloat16 ? 2e-3 : row >= (1 << 14) ? 1e-4 : 1e-5;
  EXPECT_TRUE(gpu_test::all_close(gpu_test::download_floats(dy, n, dtype), want, tol, tol))
      << c.batch << "x" << c.channels << "x" << c.spatial << " groups " << c.groups;
  EXPECT_TRUE(dy.guard_intact());
}

TEST(GpuInstanceNorm, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const NormCase cases[] = {{1, 80, 300, 0, false, ActivationKind::kNone},  // a speech frontend
                            {2, 3, 1, 0, false, ActivationKind::kNone},     // one element a row
                            {1, 5, 257, 0, false, ActivationKind::kRelu},
                            {2, 16, 64 * 64, 0, false, ActivationKind::kNone},  // style transfer
                            {1, 2, 40000, 0, false, ActivationKind::kGelu}};
  for (const NormCase& c : cases)
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) expect_matches_twin(c, dtype, rng);
}

TEST(GpuGroupNorm, MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const NormCase cases[] = {{1, 64, 32 * 32, 32, false, ActivationKind::kNone},  // a UNet block
                            {2, 6, 7, 3, false, ActivationKind::kRelu},
                            {1, 512, 100, 1, false, ActivationKind::kNone},  // one group
                            {2, 12, 33, 4, true, ActivationKind::kNone},     // opset 18 affine
                            {1, 8, 5, 8, false, ActivationKind::kSilu}};     // one channel a group
  for (const NormCase& c : cases)
    for (DType dtype : {DType::kFloat16, DType::kFloat32}) expect_matches_twin(c, dtype, rng);
}

}  // namespace
}  // namespace jetplan::kernels
