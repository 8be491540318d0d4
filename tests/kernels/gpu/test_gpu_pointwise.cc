// CUDA pointwise kernels (kernels/cuda/pointwise.cu) against their CPU twins
// (kernels/cpu/activation.cc, binary.cc): FP16 storage, fresh random inputs, poisoned outputs.
// Tolerance: FP16 output rounding (2^-11 relative) plus the twin's FP32 on FP16-rounded inputs:
// |got - want| <= 2e-3 * |want| + 2e-3 (transcendentals use fast exp in FP32).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/cpu_kernels.h"
#include "tests/kernels/gpu/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
using test_util::Shape;

constexpr uint16_t kActivation = 4, kBinary = 3;

testing::AssertionResult close_half(const std::vector<uint16_t>& got, const std::vector<float>& want,
                                    double rel, double abs) {
  for (size_t i = 0; i < want.size(); ++i) {
    const float g = half_to_float(got[i]);
    const double tol = abs + rel * std::fabs(want[i]);
    if (!(std::fabs(g - want[i]) <= tol)) {  // NaN fails
      return testing::AssertionFailure() << "element " << i << ": got " << g << " (bits 0x"
                                         << std::hex << got[i] << std::dec << "), want " << want[i];
    }
  }
  return testing::AssertionSuccess();
}

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
    DeviceBuffer dx(count * 2), dy(count * 2);
    dx.upload(gpu_test::to_half(x).data(), count * 2);
    dy.poison16(gpu_test::kHalfPoison);
    cuda::StepPointers ptrs{};
    ptrs.in[0] = dx.get();
    ptrs.out[0] = dy.get();
    ASSERT_EQ(gpu_test::select_and_launch(kActivation, DType::kFloat16, ptrs, p), "");
    const std::vector<uint8_t> all = dy.download_all();
    std::vector<uint16_t> got(count);
    std::memcpy(got.data(), all.data(), count * 2);
    EXPECT_TRUE(close_half(got, want, 2e-3, 2e-3)) << "count " << count;
    EXPECT_TRUE(dy.guard_intact()) << "count " << count;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryActivation, GpuPointwise,
                         testing::Range(0, static_cast<int>(std::size(test_util::kEveryActivation))));

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
      DeviceBuffer da(na * 2), db(nb * 2), dy(ny * 2);
      da.upload(gpu_test::to_half(a).data(), na * 2);
      db.upload(gpu_test::to_half(b).data(), nb * 2);
      dy.poison16(gpu_test::kHalfPoison);
      cuda::StepPointers ptrs{};
      ptrs.in[0] = da.get();
      ptrs.in[1] = db.get();
      ptrs.out[0] = dy.get();
      ASSERT_EQ(gpu_test::select_and_launch(kBinary, DType::kFloat16, ptrs, p), "");
      std::vector<uint16_t> got(ny);
      std::memcpy(got.data(), dy.download_all().data(), ny * 2);
      EXPECT_TRUE(close_half(got, want, 2e-3, 2e-3)) << test_util::shape_str(c.a) << " op "
                                                     << static_cast<int>(op);
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels
