// CUDA Activation and Binary kernels (kernels/cuda/activation.cu, binary.cu) against their CPU twins
// (kernels/cpu/activation.cc, binary.cc): FP16 storage, fresh random inputs, poisoned outputs.
// Tolerance: FP16 output rounding (2^-11 relative) plus the twin's FP32 on FP16-rounded inputs:
// |got - want| <= 2e-3 * |want| + 2e-3 (transcendentals use fast exp in FP32).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace gpu_test;
using namespace test_util;

constexpr uint16_t kBinary = static_cast<uint16_t>(OpFamilyId::kBinary);

TEST(GpuBinary, BroadcastMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  struct Case { Shape a, b; };
  const Case cases[] = {{{2, 3, 5, 7}, {2, 3, 5, 7}}, {{1, 7, 7, 64}, {1, 1, 1, 64}},
                        {{8, 1, 5}, {1, 6, 1}}, {{1}, {33}}};
  for (const Case& c : cases) {
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMul, BinaryOp::kSub, BinaryOp::kMax,
                        BinaryOp::kMin, BinaryOp::kPRelu}) {
      const Shape out = test_util::broadcast_shapes({c.a, c.b});
      BinaryParams p;
      p.op = op;
      p.rank = static_cast<int32_t>(out.size());
      for (size_t d = 0; d < out.size(); ++d) p.out_dims[d] = out[d];
      test_util::broadcast_strides(c.a, out, p.a_strides);
      test_util::broadcast_strides(c.b, out, p.b_strides);
      p.act = Activation{ActivationKind::kRelu, 0, 0};
      const int64_t na = test_util::volume(c.a), nb = test_util::volume(c.b),
                    ny = test_util::volume(out);
      std::vector<float> a = gpu_test::round_half(rng.uniform(na, -3.f, 3.f));
      std::vector<float> b = gpu_test::round_half(rng.uniform(nb, -3.f, 3.f));
      std::vector<float> want(ny);
      cpu::binary(p, a.data(), b.data(), want.data());
      const auto da = gpu_test::to_device(a, DType::kFloat16);
      const auto db = gpu_test::to_device(b, DType::kFloat16);
      DeviceBuffer dy(ny * 2);
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs = gpu_test::step_pointers({da.get(), db.get()}, dy);
      ASSERT_EQ(gpu_test::select_and_launch(kBinary, DType::kFloat16, ptrs, p), "");
      EXPECT_TRUE(gpu_test::all_close_half(dy.download<uint16_t>(ny), want, 2e-3, 2e-3))
          << test_util::shape_str(c.a) << " op " << static_cast<int>(op);
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
