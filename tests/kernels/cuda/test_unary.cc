// CUDA Unary kernels (kernels/cuda/unary.cu) against the CPU twin (kernels/cpu/unary.cc): every
// UnaryOp on Float32 and Float16 storage, int32/int64 Abs/Neg/Sign and bool Not; fresh random
// inputs on each op's domain plus 0, -0, +-inf and NaN; outputs poisoned, guards checked.
// Tolerances: Float32 |got - want| <= 1e-5 |want| + 1e-6 (libdevice vs libm, a few ulp);
// Float16 (twin in FP32 on the FP16-rounded input, result rounded once) 2e-3 |want| + 1e-3;
// a NaN wanted must come back NaN, an infinity exactly; predicates and integers bit-exact.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;
constexpr uint16_t kUnary = static_cast<uint16_t>(OpFamilyId::kUnary);

testing::AssertionResult close_float(const std::vector<float>& got, const std::vector<float>& want,
                                     double rel, double abs) {
  for (size_t i = 0; i < want.size(); ++i) {
    const float g = got[i], w = want[i];
    bool ok;
    if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::fabs(double(g) - w) <= abs + rel * std::fabs(w);  // NaN fails
    if (!ok) return testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
  }
  return testing::AssertionSuccess();
}

// Inputs on the op's domain (where the twin is finite and well conditioned) plus specials.
std::vector<float> unary_inputs(test_util::SeededRng& rng, UnaryOp op, int64_t n) {
  float lo = -6.f, hi = 6.f;
  switch (op) {
    case UnaryOp::kLog: case UnaryOp::kSqrt: lo = 0.01f; hi = 10.f; break;
    case UnaryOp::kAsin: case UnaryOp::kAcos: case UnaryOp::kAtanh: lo = -0.99f; hi = 0.99f; break;
    case UnaryOp::kAcosh: lo = 1.01f; hi = 10.f; break;
    case UnaryOp::kTan: lo = -1.4f; hi = 1.4f; break;
    case UnaryOp::kExp: case UnaryOp::kSinh: case UnaryOp::kCosh: lo = -8.f; hi = 8.f; break;
    default: break;
  }
  std::vector<float> x = rng.uniform(n, lo, hi);
  if (op == UnaryOp::kReciprocal) x = rng.signed_magnitude(n, 0.1f, 10.f);
  if (op == UnaryOp::kRound || op == UnaryOp::kFloor || op == UnaryOp::kCeil || op == UnaryOp::kSign)
    for (int64_t i = 0; i < n; i += 2) x[i] = 0.5f * static_cast<float>(rng.integer(-12, 12));
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.f, -0.f, inf, -inf, std::nanf("")};
  for (size_t s = 0; s < std::size(specials) && static_cast<int64_t>(s) * 7 < n; ++s)
    x[s * 7] = specials[s];
  return x;
}

class GpuUnary : public testing::TestWithParam<int> {};

TEST_P(GpuUnary, FloatMatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  const auto op = static_cast<UnaryOp>(GetParam());
  if (op == UnaryOp::kNot) GTEST_SKIP() << "Not is bool only (GpuUnaryInt.Not)";
  const bool pred = unary_is_predicate(op);
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    const bool f16 = dt == DType::kFloat16;
    for (int64_t count : {1, 7, 4099, 100003}) {
      std::vector<float> x = gpu_test::as_stored(unary_inputs(rng, op, count), f16);
      UnaryParams p;
      p.op = op;
      p.dtype = DType::kFloat32;  // the twin computes in float32
      p.count = count;
      std::vector<float> want(count);
      std::vector<unsigned char> want_pred(count);
      cpu::unary(p, x.data(), pred ? static_cast<void*>(want_pred.data()) : want.data());
      p.dtype = dt;
      const int64_t xbytes = count * (f16 ? 2 : 4), ybytes = pred ? count : xbytes;
      const auto dx = gpu_test::to_device(x, dt);
      DeviceBuffer dy(ybytes);
      if (f16 && !pred) dy.poison16(gpu_test::kHalfPoison);
      else if (!pred) dy.poison32(gpu_test::kFloatPoison);
      else {
        std::vector<unsigned char> fill(count, 0xEE);
        dy.upload(fill.data(), count);
      }
      cuda::StepPointers ptrs = gpu_test::step_pointers({dx.get()}, dy);
      ASSERT_EQ(gpu_test::select_and_launch(kUnary, dt, ptrs, p), "");
      if (pred) {
        EXPECT_EQ(dy.download<unsigned char>(count), want_pred) << "count " << count;
      } else if (f16) {
        EXPECT_TRUE(close_float(gpu_test::from_half(dy.download<uint16_t>(count)),
                                want, 2e-3, 1e-3)) << "f16 count " << count;
      } else {
        EXPECT_TRUE(close_float(dy.download<float>(count), want, 1e-5, 1e-6))
            << "f32 count " << count;
      }
      EXPECT_TRUE(dy.guard_intact()) << "count " << count;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOp, GpuUnary, testing::Range(0, kUnaryOpCount));

template <typename T>
void check_int(DType dt) {
  SEEDED_RNG(rng);
  for (UnaryOp op : {UnaryOp::kAbs, UnaryOp::kNeg, UnaryOp::kSign}) {
    for (int64_t count : {1, 9, 70001}) {
      std::vector<T> x(count);
      for (T& v : x) v = static_cast<T>(rng.bits64());
      x[0] = std::numeric_limits<T>::min();
      if (count > 2) x[1] = 0, x[2] = std::numeric_limits<T>::max();
      UnaryParams p;
      p.op = op;
      p.dtype = dt;
      p.count = count;
      std::vector<T> want(count);
      cpu::unary(p, x.data(), want.data());
      DeviceBuffer dx(count * sizeof(T)), dy(count * sizeof(T));
      dx.upload(x.data(), count * sizeof(T));
      dy.poison32(0x5a5a5a5au);
      cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
      ASSERT_EQ(gpu_test::select_and_launch(kUnary, dt, ptrs, p), "");
      EXPECT_EQ(dy.download<T>(count), want) << "op " << int(op) << " count " << count;
      EXPECT_TRUE(dy.guard_intact());
    }
  }
}

TEST(GpuUnaryInt, Int32) { GPU_TEST_OR_SKIP(); check_int<int32_t>(DType::kInt32); }
TEST(GpuUnaryInt, Int64) { GPU_TEST_OR_SKIP(); check_int<int64_t>(DType::kInt64); }

TEST(GpuUnaryInt, Not) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (int64_t count : {1, 13, 65537}) {
    test_util::Bytes x = rng.bytes(count);
    for (int64_t i = 0; i < count; i += 3) x[i] = 0;
    UnaryParams p;
    p.op = UnaryOp::kNot;
    p.dtype = DType::kBool;
    p.count = count;
    std::vector<unsigned char> want(count);
    cpu::unary(p, x.data(), want.data());
    DeviceBuffer dx(count), dy(count);
    dx.upload(x.data(), count);
    std::vector<unsigned char> fill(count, 0xEE);
    dy.upload(fill.data(), count);
    cuda::StepPointers ptrs = gpu_test::step_pointers({&dx}, dy);
    ASSERT_EQ(gpu_test::select_and_launch(kUnary, DType::kBool, ptrs, p), "");
    EXPECT_EQ(dy.download<unsigned char>(count), want);
    EXPECT_TRUE(dy.guard_intact());
  }
}

TEST(GpuUnarySelect, RefusesWhatItLacks) {
  UnaryParams p;
  p.op = UnaryOp::kExp;
  p.dtype = DType::kInt32;
  p.count = 4;
  cuda::StepDesc step = gpu_test::step_of(kUnary, &p);
  cuda::TargetInfo t = gpu_test::target_with(4);
  cuda::LaunchChoice c;
  std::string why;
  EXPECT_FALSE(cuda::select_kernel(step, t, &c, &why));
  p.dtype = DType::kFloat16;
  EXPECT_TRUE(cuda::select_kernel(step, t, &c, &why)) << why;
  EXPECT_STREQ(c.variant->name, "jp_unary_f16");
}

}  // namespace
}  // namespace jetplan::kernels
