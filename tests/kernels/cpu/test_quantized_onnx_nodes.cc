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

// --------------------------------------------------------------------- ONNX node test data

// Every attribute of these models is at its default (axis = 1; QLinearConv: no padding,
// stride 1, group 1). Tensors are taken in ONNX input order: x, scale, zero point for the
// quantize tests; a/x, scale, zp, b/w, scale, zp, y_scale, y_zp for the QLinear ones.
// The params of a QuantizeLinear or DequantizeLinear case t (x, scale, zero point, y) of
// quantized type `qtype`: per channel over dim 1 (the default axis) when the scale is a vector.
QuantizeLinearParams quantize_case_params(const std::vector<OnnxTensor>& t, DType qtype) {
  const bool axis = t[1].dims.size() == 1;
  return {qtype,
          1,
          axis ? t[0].dims[1] : 1,
          axis ? element_count(t[0]) / t[0].dims[1] : element_count(t[0]),
          axis,
          true};
}

TEST(Quant, OnnxNodeTestData) {
  if (!have_node_test("test_qlinearconv"))
    GTEST_SKIP() << "no ONNX node test data in " << node_data_dir();
  for (const char* test : {"test_quantizelinear", "test_quantizelinear_axis"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 4u);
    const QuantizeLinearParams p = quantize_case_params(t, qtype_of(t[2]));
    const std::vector<float> x = floats_of(t[0]), s = floats_of(t[1]);
    check_bytes(element_count(t[3]), qtype_of(t[3]), expected_bytes(t[3]), [&](uint8_t* y) {
      cpu::quantize_linear(p, x.data(), s.data(), bytes_of(t[2]), y);
    });
  }
  for (const char* test : {"test_dequantizelinear", "test_dequantizelinear_axis"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 4u);
    const QuantizeLinearParams p = quantize_case_params(t, qtype_of(t[0]));
    Output y(element_count(t[3]));
    cpu::dequantize_linear(p, bytes_of(t[0]), floats_of(t[1]).data(), bytes_of(t[2]), y.data());
    EXPECT_TRUE(all_close(y, to_doubles(floats_of(t[3])), kExact));
  }
  for (const char* test : {"test_qlinearmatmul_2D", "test_qlinearmatmul_3D"}) {
    SCOPED_TRACE(test);
    const std::vector<OnnxTensor> t = load_node_case(test);
    ASSERT_EQ(t.size(), 9u);
    const Shape& ad = t[0].dims;
    QLinearMatMulParams p;
    p.batch = ad.size() == 3 ? ad[0] : 1;
    p.M = ad[ad.size() - 2], p.K = ad.back(), p.N = t[3].dims.back();
    p.a_batch_stride = p.M * p.K, p.b_batch_stride = p.K * p.N;
    p.a_type = qtype_of(t[0]), p.b_type = qtype_of(t[3]), p.y_type = qtype_of(t[8]);
    const std::vector<float> as = floats_of(t[1]), bs = floats_of(t[4]), ys = floats_of(t[6]);
    check_bytes(element_count(t[8]), p.y_type, expected_bytes(t[8]), [&](uint8_t* y) {
      cpu::qlinear_matmul(p, bytes_of(t[0]), as.data(), bytes_of(t[2]), bytes_of(t[3]), bs.data(),
                          bytes_of(t[5]), ys.data(), bytes_of(t[7]), y);
    });
  }
  {
    const std::vector<OnnxTensor> t = load_node_case("test_qlinearconv");
    ASSERT_EQ(t.size(), 9u);
    QLinearConvParams q;
    ConvParams& p = q.conv;
    p.batch = t[0].dims[0], p.in_channels = t[0].dims[1], p.out_channels = t[3].dims[0];
    for (int d = 0; d < 2; ++d) {
      p.in_size[d] = t[0].dims[size_t(2 + d)], p.kernel[d] = t[3].dims[size_t(2 + d)];
      p.out_size[d] = p.in_size[d] - p.kernel[d] + 1;
    }
    q.x_type = qtype_of(t[0]), q.w_type = qtype_of(t[3]), q.y_type = qtype_of(t[8]);
    q.w_per_channel = element_count(t[4]) > 1;
    const std::vector<float> xs = floats_of(t[1]), ws = floats_of(t[4]), ys = floats_of(t[6]);
    check_bytes(element_count(t[8]), q.y_type, expected_bytes(t[8]), [&](uint8_t* y) {
      cpu::qlinear_conv(q, bytes_of(t[0]), xs.data(), bytes_of(t[2]), bytes_of(t[3]), ws.data(),
                        bytes_of(t[5]), ys.data(), bytes_of(t[7]), nullptr, y);
    });
  }
}

}  // namespace
}  // namespace jetplan::kernels
