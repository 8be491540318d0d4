// CUDA Activation and Binary kernels (kernels/cuda/activation.cu, binary.cu) against their CPU twins
// (kernels/cpu/activation.cc, binary.cc): FP16 storage, fresh random inputs, poisoned outputs.
// Tolerance: FP16 output rounding (2^-11 relative) plus the twin's FP32 on FP16-rounded inputs:
// |got - want| <= 2e-3 * |want| + 2e-3 (transcendentals use fast exp in FP32).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/reference_formulas.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kActivation = static_cast<uint16_t>(OpFamilyId::kActivation);

class GpuPointwise : public testing::TestWithParam<int> {};

TEST_P(GpuPointwise, ActivationMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const Activation act = test_util::kEveryActivation[GetParam()];
  for (int64_t count : {1, 7, 4096, 100003}) {
    std::vector<float> x = gpu_test::round_half(rng.uniform(count, -6.f, 6.f));
    ActivationParams p;
    p.count = count;
    p.act = act;
    std::vector<float> want(count);
    cpu::activation(p, x.data(), want.data());
    const auto dx = gpu_test::to_device(x, DType::kFloat16);
    DeviceBuffer dy(count * 2);
    dy.poison16(gpu_test::kHalfPoison);
    cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get()}, dy);
    ASSERT_EQ(gpu_test::select_and_launch(kActivation, DType::kFloat16, ptrs, p), "");
    EXPECT_TRUE(gpu_test::all_close_half(dy.download<uint16_t>(count), want, 2e-3, 2e-3))
        << "count " << count;
    EXPECT_TRUE(dy.guard_intact()) << "count " << count;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryActivation, GpuPointwise,
                         testing::Range(0, static_cast<int>(std::size(test_util::kEveryActivation))));

}  // namespace
}  // namespace jetplan::kernels
