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

TEST(QuantCompareHelper, RejectsWrongUnwrittenAndOverrun) {
  auto copy = [](Bytes b) { return [b](uint8_t* y) { std::copy(b.begin(), b.end(), y); }; };
  const Allowed want = exactly(DType::kInt8, {-1, 127});
  EXPECT_EQ(check_bytes(2, DType::kInt8, want, copy({0xff, 0x7f})), 1);
  EXPECT_NONFATAL_FAILURE(check_bytes(2, DType::kInt8, want, copy({0xff, 0x7e})), "got 126");
  EXPECT_NONFATAL_FAILURE(check_bytes(2, DType::kInt8, want, [](uint8_t* y) { y[1] = 0x7f; }),
                          "got");
  EXPECT_NONFATAL_FAILURE(check_bytes(2, DType::kInt8, want, copy({0xff, 0x7f, 0})), "past");
  Allowed tie;
  allow(tie, 2.5, 1e-9, 0, DType::kUInt8);
  allow(tie, -2.5000001, 1e-9, 0, DType::kInt8);
  EXPECT_EQ(tie.lo, (std::vector<int32_t>{2, -3}));
  EXPECT_EQ(tie.hi, (std::vector<int32_t>{3, -3}));
}

// ------------------------------------------------------------------ quantize / dequantize


TEST(QuantizeLinear, HandTiesSaturationAndNaN) {
  const float inf = INFINITY;
  const std::vector<float> x = {0.5f,   1.5f,    2.5f, -0.5f, -1.5f, -2.5f, 2.4999998f, 2.5000002f,
                                127.5f, -128.5f, 1000, -1000, inf,   -inf,  NAN};
  const float one = 1.f;
  const QuantizeLinearParams p{DType::kInt8, 1, 1, int64_t(x.size()), false, false};
  check_bytes(int64_t(x.size()), DType::kInt8,
              exactly(DType::kInt8, {0, 2, 2, 0, -2, -2, 2, 3, 127, -128, 127, -128, 127, -128, 0}),
              [&](uint8_t* y) { cpu::quantize_linear(p, x.data(), &one, nullptr, y); });

  // uint8, scale 0.5, zero point 10: 0.25 -> 0.5 -> 0; 0.75 -> 2; 1.25 -> 2; -2.25 -> -4;
  // -5.25 -> -10 -> 0 saturated; 122.75 -> 246 + 10 saturated; NaN -> the zero point.
  const std::vector<float> u = {0.25f, 0.75f, 1.25f, -2.25f, -5.25f, 122.75f, NAN};
  const float half = 0.5f;
  const uint8_t zp = 10;
  const QuantizeLinearParams pu{DType::kUInt8, 1, 1, int64_t(u.size()), false, true};
  check_bytes(int64_t(u.size()), DType::kUInt8, exactly(DType::kUInt8, {10, 12, 12, 6, 0, 255, 10}),
              [&](uint8_t* y) { cpu::quantize_linear(pu, u.data(), &half, &zp, y); });
}

TEST(QuantizeLinear, HandQuotientIsRoundedToFloatFirst) {
  // 0.35f / 0.1f is 3.49999988824 exactly but 3.5 in float, which ONNX's reference and
  // onnxruntime then round to 4; a double quotient would give 3.
  const float x = 0.35f, s = 0.1f;
  const QuantizeLinearParams p{DType::kInt8, 1, 1, 1, false, false};
  check_bytes(1, DType::kInt8, exactly(DType::kInt8, {4}),
              [&](uint8_t* y) { cpu::quantize_linear(p, &x, &s, nullptr, y); });
}

TEST(QuantizeLinear, HandPerChannelWithoutZeroPoint) {
  // [outer 2, channels 2, inner 2], scales 1 and 0.25.
  const std::vector<float> x = {1.5f, -1.5f, 1.5f, 0.125f, 3, 100, -0.375f, 40};
  const float scale[2] = {1.f, 0.25f};
  const QuantizeLinearParams p{DType::kInt8, 2, 2, 2, true, false};
  check_bytes(8, DType::kInt8, exactly(DType::kInt8, {2, -2, 6, 0, 3, 100, -2, 127}),
              [&](uint8_t* y) { cpu::quantize_linear(p, x.data(), scale, nullptr, y); });
}

TEST(QuantizeLinear, RandomMatchesDoubleReference) {
  SEEDED_RNG(rng);
  int64_t saturated = 0, ties = 0, total = 0;
  for (int rep = 0; rep < 4; ++rep)
    for (DType t : kQTypes)
      for (bool per_channel : {false, true})
        for (bool has_zp : {false, true}) {
          const QTensor q = random_qtensor(rng, t, per_channel, has_zp);
          const int64_t n = q.p.outer * q.p.channels * q.p.inner;
          std::vector<float> x;
          Allowed want;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t c = (i / q.p.inner) % q.p.channels;
            x.push_back(rng.uniform(-2.5f, 2.5f));
            // The kernel divides in float: its quotient is within 2^-24 of the exact one.
            allow(want, double(x.back()) / q.scale[size_t(per_channel ? c : 0)], 0x1p-23, q.zero(c),
                  t);
            ties += want.lo.back() != want.hi.back();
          }
          total += n;
          saturated += check_bytes(n, t, want, [&](uint8_t* y) {
            cpu::quantize_linear(q.p, x.data(), q.scale.data(), has_zp ? q.zp.data() : nullptr, y);
          });
        }
  EXPECT_GT(saturated, 0) << "the inputs should reach saturation";
  EXPECT_LE(ties * 100, total) << "near-ties should be rare";
}

// The image form (an INT8 stem's input): x NCHW or NHWC into y NHWC with C' >= C channels, the
// added ones the zero point; each value against the double reference at the place the layouts
// put it, Int8 and UInt8, with and without a zero point, C' a multiple of 8 or not.
TEST(QuantizeLinear, ImageFormTransposesAndPadsChannels) {
  SEEDED_RNG(rng);
  for (const QuantizeLayout layout :
       {QuantizeLayout::kNchwToNhwcPadded, QuantizeLayout::kNhwcPadded})
    for (DType t : kQTypes)
      for (const auto& [c, cp] : {std::pair<int64_t, int64_t>{3, 8}, {12, 16}, {5, 7}, {8, 8}}) {
        const int64_t n = 2, h = 3, w = 5;
        QuantizeLinearParams p;
        p.qtype = t;
        p.has_zero_point = c == 5;
        p.layout = layout;
        p.outer = n;
        p.channels = c;
        p.inner = h * w;
        p.padded_channels = cp;
        const std::vector<float> x = rng.uniform(n * c * h * w, -3.f, 3.f);
        const float scale = rng.uniform(0.005f, 0.02f);  // |x| / scale reaches 150
        const uint8_t zp = t == DType::kInt8 ? encode(-3) : 7;
        const int32_t zero = p.has_zero_point ? decode(t, zp) : 0;
        Allowed want;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < h * w; ++i)
            for (int64_t ch = 0; ch < cp; ++ch) {
              if (ch >= c) {
                want.lo.push_back(zero);
                want.hi.push_back(zero);
                continue;
              }
              const size_t at = size_t(layout == QuantizeLayout::kNhwcPadded
                                           ? (b * h * w + i) * c + ch
                                           : (b * c + ch) * h * w + i);
              allow(want, double(x[at]) / scale, 0x1p-23, zero, t);
            }
        const int64_t saturated = check_bytes(n * h * w * cp, t, want, [&](uint8_t* y) {
          cpu::quantize_linear(p, x.data(), &scale, p.has_zero_point ? &zp : nullptr, y);
        });
        EXPECT_GT(saturated, 0) << "the inputs should reach saturation";
      }
}

TEST(QuantizeValue, RoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(cpu::round_half_even(2.5), 2.0);
  EXPECT_EQ(cpu::round_half_even(3.5), 4.0);
  EXPECT_EQ(cpu::round_half_even(-2.5), -2.0);
  EXPECT_EQ(cpu::round_half_even(-0.49999999999999994), 0.0);
  EXPECT_EQ(cpu::round_half_even(4503599627370497.0), 4503599627370497.0);  // 2^52 + 1
  EXPECT_EQ(cpu::round_half_even(NAN), 0.0);
  EXPECT_EQ(cpu::quantize_value(1e300, 0, DType::kInt8), 127);
  EXPECT_EQ(cpu::quantize_value(-INFINITY, 5, DType::kUInt8), 0);
  EXPECT_EQ(cpu::quantize_value(-0.5, -128, DType::kInt8), -128);
  EXPECT_EQ(cpu::quantize_value(127.5, 127, DType::kUInt8), 255);
}

}  // namespace
}  // namespace jetplan::kernels
