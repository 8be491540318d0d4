// QuantizeLinear, DequantizeLinear, QLinearMatMul and QLinearConv against references written
// here another way: real values in double (dequantize, multiply or convolve over an explicitly
// padded tensor, divide by the output scale), then quantized by a separate function rounding
// with std::nearbyint. Where the kernel's documented float rounding can move a value across a
// tie, both neighbours pass (and such cases stay rare, which is checked). Hand cases pin ties,
// saturation and int32 wrap exactly, and the ONNX node test data is compared bit for bit.
// Byte outputs run twice, poisoned 0xA5 then 0x5A, with a guard zone; float ones are
// NaN-poisoned. JETPLAN_TEST_SEED=<n> replays a failure.

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/cpu/quantized_bytes.h"
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// ---------------------------------------------------------------------------- QLinearMatMul


TEST(QLinearMatMul, RandomMatchesRealValuedReference) {
  SEEDED_RNG(rng);
  int64_t saturated = 0;
  for (int rep = 0; rep < 40; ++rep) {
    QLinearMatMulParams p;
    p.batch = 1 + rng.below(3), p.M = 1 + rng.below(5), p.N = 1 + rng.below(5);
    p.K = 1 + rng.below(9);
    p.a_type = random_qtype(rng), p.b_type = random_qtype(rng), p.y_type = random_qtype(rng);
    p.a_per_row = rng.below(2), p.b_per_column = rng.below(2);
    p.a_batch_stride = rng.below(3) ? p.M * p.K : 0;  // 0 broadcasts one matrix
    p.b_batch_stride = rng.below(3) ? p.K * p.N : 0;
    const Bytes a = rng.bytes((p.batch - 1) * p.a_batch_stride + p.M * p.K);
    const Bytes b = rng.bytes((p.batch - 1) * p.b_batch_stride + p.K * p.N);
    const std::vector<float> as = scales(rng, p.a_per_row ? p.M : 1);
    const std::vector<float> bs = scales(rng, p.b_per_column ? p.N : 1);
    const Bytes azp = rng.bytes(int64_t(as.size())), bzp = rng.bytes(int64_t(bs.size()));
    const Bytes yzp = rng.bytes(1);
    // Real values: dequantize each operand, multiply in double.
    auto A = [&](int64_t i, int64_t m, int64_t k) {
      const size_t r = p.a_per_row ? size_t(m) : 0;
      return (decode(p.a_type, a[size_t(i * p.a_batch_stride + m * p.K + k)]) -
              decode(p.a_type, azp[r])) *
             double(as[r]);
    };
    auto B = [&](int64_t i, int64_t k, int64_t n) {
      const size_t c = p.b_per_column ? size_t(n) : 0;
      return (decode(p.b_type, b[size_t(i * p.b_batch_stride + k * p.N + n)]) -
              decode(p.b_type, bzp[c])) *
             double(bs[c]);
    };
    std::vector<double> real;
    for (int64_t i = 0; i < p.batch; ++i)
      for (int64_t m = 0; m < p.M; ++m)
        for (int64_t n = 0; n < p.N; ++n) {
          double s = 0;
          for (int64_t k = 0; k < p.K; ++k) s += A(i, m, k) * B(i, k, n);
          real.push_back(s);
        }
    const float ys = output_scale(real);
    Allowed want;
    for (double v : real) allow(want, v / ys, 1e-12, decode(p.y_type, yzp[0]), p.y_type);
    saturated += check_bytes(int64_t(real.size()), p.y_type, want, [&](uint8_t* y) {
      cpu::qlinear_matmul(p, a.data(), as.data(), azp.data(), b.data(), bs.data(), bzp.data(), &ys,
                          yzp.data(), y);
    });
  }
  EXPECT_GT(saturated, 0);
}

TEST(QLinearMatMul, HandTiesAndInt32Wrap) {
  // a [2, 2] uint8 (scale 0.5, zp 0) times b = I (int8, scale 1, zp 0) with y_scale 1, y_zp 0:
  // y = a / 2 rounds 0.5, 1.5, 2.5 and 255 / 2 = 127.5 half to even.
  const Bytes a = {1, 3, 5, 255}, b = {1, 0, 0, 1}, zero = {0};
  const float half = 0.5f, one = 1.f;
  QLinearMatMulParams p;
  p.M = p.N = p.K = 2;
  p.a_type = DType::kUInt8, p.b_type = DType::kInt8, p.y_type = DType::kUInt8;
  check_bytes(4, DType::kUInt8, exactly(DType::kUInt8, {0, 2, 2, 128}), [&](uint8_t* y) {
    cpu::qlinear_matmul(p, a.data(), &half, zero.data(), b.data(), &one, zero.data(), &one,
                        zero.data(), y);
  });
  // K = 34000 products of (-128 - 127) * 255 sum to -2210850000, which int32 wraps to
  // 2084117296; with y_scale 1e8 that is 20.84 -> 21 (unwrapped it would saturate at -128).
  const int64_t K = 34000;
  const Bytes a2(size_t(K), encode(-128)), b2(size_t(K), 255), a_zp = {127};
  const float big = 1e8f;
  QLinearMatMulParams w;
  w.M = w.N = 1, w.K = K;
  w.a_type = DType::kInt8, w.b_type = DType::kUInt8, w.y_type = DType::kInt8;
  check_bytes(1, DType::kInt8, exactly(DType::kInt8, {21}), [&](uint8_t* y) {
    cpu::qlinear_matmul(w, a2.data(), &one, a_zp.data(), b2.data(), &one, zero.data(), &big,
                        zero.data(), y);
  });
}

}  // namespace
}  // namespace jetplan::kernels
