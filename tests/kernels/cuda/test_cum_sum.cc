// CUDA CumSum (kernels/cuda/cum_sum.cu) against its CPU twin (kernels/cpu/cum_sum.cc): float32,
// float16, int32 and int64, inclusive and exclusive, forward and reverse, over axes short and
// long, lanes few and many. Both add the same numbers in the same order, so the integers (the
// int32 case wraps) must match bit for bit; float32 within 1e-6 absolute (a denormal partial
// sum the device flushes is the only difference allowed) and float16 within one output
// rounding: |got - want| <= 1e-3 |want| + 1e-4. Outputs poisoned, guards checked, NaN never
// passes.
// CumProd (CumSumParams::product): the same kernels multiply through the twin's own
// cum_sum_combine, left to right, each product rounded once (IEEE multiplication, no
// contraction possible, denormals kept: no -ftz), so float32, float64 and the integers must
// match bit for bit; float16 (multiplied in float32) within one output rounding as above.
// Factors are near 1 in magnitude with random signs, so 4096 of them neither overflow nor vanish
// and every product is inexact; integer factors are odd, so wrapped products never reach 0.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/cuda/gpu_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using gpu_test::DeviceBuffer;

constexpr uint16_t kCumSum = static_cast<uint16_t>(OpFamilyId::kCumSum);

struct Case {
  int64_t outer, length, inner;
};

constexpr Case kCases[] = {
    {1, 100, 1},    // one lane
    {2, 7, 3},      // lanes strided by inner
    {3, 1, 5},      // an axis of one
    {4, 300, 64},   // 256 lanes
    {1, 4096, 1},   // a long axis
    {64, 16, 1},    // position ids of a batch
};

CumSumParams params_of(const Case& c, DType dtype, bool exclusive, bool reverse,
                       bool product = false) {
  CumSumParams p;
  p.product = product;
  p.dtype = dtype;
  p.outer = c.outer;
  p.length = c.length;
  p.inner = c.inner;
  p.exclusive = exclusive;
  p.reverse = reverse;
  return p;
}

// x's bytes uploaded, y poisoned, the selector's kernel launched: y's bytes (guard checked).
std::vector<uint8_t> run_gpu(const CumSumParams& p, const std::vector<uint8_t>& x) {
  DeviceBuffer dx(x.size()), dy(x.size());
  dx.upload(x.data(), x.size());
  dy.poison32(gpu_test::kFloatPoison);
  const std::string status =
      gpu_test::select_and_launch(kCumSum, p.dtype, gpu_test::step_pointers({&dx}, dy), p);
  EXPECT_EQ(status, "");
  EXPECT_TRUE(dy.guard_intact());
  return gpu_test::download_bytes(dy, x.size());
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> values_of(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

TEST(GpuCumSum, FloatsMatchCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : kCases)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true})
        for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
          const bool f16 = dtype == DType::kFloat16;
          const int64_t n = c.outer * c.length * c.inner;
          const std::vector<float> x = rng.uniform(n, -1.f, 1.f);
          const std::vector<uint8_t> xb = f16 ? bytes_of(gpu_test::to_half(x)) : bytes_of(x);
          const CumSumParams p = params_of(c, dtype, exclusive, reverse);
          std::vector<uint8_t> want(xb.size());
          cpu::cum_sum(p, xb.data(), want.data());
          const std::vector<uint8_t> got = run_gpu(p, xb);
          const auto floats = [&](const std::vector<uint8_t>& b) {
            return f16 ? gpu_test::from_half(values_of<uint16_t>(b)) : values_of<float>(b);
          };
          ASSERT_TRUE(gpu_test::all_close(floats(got), floats(want), f16 ? 1e-3 : 0.0,
                                          f16 ? 1e-4 : 1e-6))
              << "(" << c.outer << ", " << c.length << ", " << c.inner << ") exclusive "
              << exclusive << " reverse " << reverse << " f16 " << f16;
        }
}

TEST(GpuCumSum, IntegersAndFloat64MatchCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : kCases)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        const int64_t n = c.outer * c.length * c.inner;
        std::vector<int32_t> x32(n);
        std::vector<int64_t> x64(n);
        std::vector<double> f64(n);
        for (int64_t i = 0; i < n; ++i) {
          x32[i] = static_cast<int32_t>(rng.integer(-2000000000, 2000000000));  // sums wrap
          x64[i] = rng.integer(-1000000, 1000000);
          f64[i] = double(rng.uniform(-1.f, 1.f)) / 3.0;  // inexact sums: the order shows
        }
        for (const auto& [dtype, xb] :
             {std::pair{DType::kInt32, bytes_of(x32)}, std::pair{DType::kInt64, bytes_of(x64)},
              std::pair{DType::kFloat64, bytes_of(f64)}}) {
          const CumSumParams p = params_of(c, dtype, exclusive, reverse);
          std::vector<uint8_t> want(xb.size());
          cpu::cum_sum(p, xb.data(), want.data());
          EXPECT_EQ(gpu_test::first_difference(run_gpu(p, xb), want), -1)
              << "(" << c.outer << ", " << c.length << ", " << c.inner << ") exclusive "
              << exclusive << " reverse " << reverse << " dtype " << static_cast<int>(dtype);
        }
      }
}

// A factor of magnitude in [0.97, 1.03), of random sign.
float factor(test_util::SeededRng& rng) {
  return rng.uniform(0.97f, 1.03f) * (rng.coin() ? 1.f : -1.f);
}

TEST(GpuCumProd, Float32Float64AndIntegersMatchCpuTwinBitForBit) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : kCases)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        const int64_t n = c.outer * c.length * c.inner;
        std::vector<float> f32(n);
        std::vector<double> f64(n);
        std::vector<int32_t> x32(n);
        std::vector<int64_t> x64(n);
        for (int64_t i = 0; i < n; ++i) {
          f32[i] = factor(rng);
          f64[i] = double(factor(rng)) / 1.0000001;  // full 53-bit mantissas
          x32[i] = static_cast<int32_t>(2 * rng.integer(-1000000000, 1000000000) + 1);
          x64[i] = 2 * rng.integer(-4000000000000000000, 4000000000000000000) + 1;
        }
        for (const auto& [dtype, xb] :
             {std::pair{DType::kFloat32, bytes_of(f32)}, std::pair{DType::kFloat64, bytes_of(f64)},
              std::pair{DType::kInt32, bytes_of(x32)}, std::pair{DType::kInt64, bytes_of(x64)}}) {
          const CumSumParams p = params_of(c, dtype, exclusive, reverse, true);
          std::vector<uint8_t> want(xb.size());
          cpu::cum_sum(p, xb.data(), want.data());
          EXPECT_EQ(gpu_test::first_difference(run_gpu(p, xb), want), -1)
              << "(" << c.outer << ", " << c.length << ", " << c.inner << ") exclusive "
              << exclusive << " reverse " << reverse << " dtype " << static_cast<int>(dtype);
        }
      }
}

TEST(GpuCumProd, Float16MatchesCpuTwin) {
  GPU_TEST_OR_SKIP();
  SEEDED_RNG(rng);
  for (const Case& c : kCases)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        const int64_t n = c.outer * c.length * c.inner;
        std::vector<float> x(n);
        for (float& v : x) v = factor(rng);
        const std::vector<uint8_t> xb = bytes_of(gpu_test::to_half(x));
        const CumSumParams p = params_of(c, DType::kFloat16, exclusive, reverse, true);
        std::vector<uint8_t> want(xb.size());
        cpu::cum_sum(p, xb.data(), want.data());
        const std::vector<uint8_t> got = run_gpu(p, xb);
        ASSERT_TRUE(gpu_test::all_close(gpu_test::from_half(values_of<uint16_t>(got)),
                                        gpu_test::from_half(values_of<uint16_t>(want)), 1e-3,
                                        1e-4))
            << "(" << c.outer << ", " << c.length << ", " << c.inner << ") exclusive "
            << exclusive << " reverse " << reverse;
      }
}

TEST(GpuCumSum, BoolHasNoKernel) {
  GPU_TEST_OR_SKIP();
  cuda::LaunchChoice choice;
  const CumSumParams p = params_of(kCases[0], DType::kBool, false, false);
  EXPECT_NE(gpu_test::select(kCumSum, DType::kBool, p, &choice), "");
}

}  // namespace
}  // namespace jetplan::kernels
