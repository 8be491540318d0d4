// The quantized families (ops/quantize.cc, dequantize.cc, qlinear_matmul.cc, qlinear_conv.cc):
// QuantizeLinear, DequantizeLinear, QLinearMatMul, QLinearConv, MatMulInteger and ConvInteger
// against references written here.
#include "tests/converter/util/quantized_util.h"

namespace jetplan::converter::testing {
namespace {

// ---------------------------------------------------------------------------------- quantized

TEST(SeqQuant, QuantizeLinearPerAxisWithANegativeAxis) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 2}).output("q", onnx::TensorProto::INT8);
  m.initializer("scale", {3}, {0.5f, 1.f, 2.f});
  i8_initializer(m, "zp", {3}, {0, -3, 100});
  auto& n = m.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "quant");
  attr(n, "axis", int64_t{-2});
  const auto& [r, plan, s] = convert_to_step(m, fb::OpFamily::Quantize);
  ASSERT_NE(s, nullptr);
  const fb::QuantizeParams* p = s->params_as_QuantizeParams();
  EXPECT_TRUE(p->per_axis());
  EXPECT_EQ(p->axis(), 1);
  EXPECT_TRUE(p->has_zero_point());
  EXPECT_EQ(plan->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);

  const std::vector<float> x = {0.25f,  0.75f, 1.5f,  2.5f,  3.f,  500.f,
                                -0.25f, -1.f,  -1.5f, -2.5f, -3.f, -500.f};
  const auto out = run_plan(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  // round half to even of x / scale, plus the channel's zero point, saturated to int8.
  EXPECT_THAT(values_of<int8_t>(out[0]),
              ElementsAre(0, 2, -1, -1, 102, 127, 0, -2, -5, -5, 98, -128));
}

TEST(SeqQuant, QuantizeWithoutZeroPointIsUInt8AndDequantizeInverts) {
  ModelBuilder m(13);
  m.input("x", {5}).output("q", onnx::TensorProto::UINT8).output("y");
  m.initializer("scale", {}, {0.1f});
  m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "quant");
  m.node("DequantizeLinear", {"q", "scale"}, {"y"}, "dequant");
  const ConvertResult r = convert_and_load(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* q = only_step(plan, fb::OpFamily::Quantize);
  const fb::Step* dq = only_step(plan, fb::OpFamily::Dequantize);
  ASSERT_TRUE(q && dq);
  EXPECT_FALSE(q->params_as_QuantizeParams()->has_zero_point());
  EXPECT_FALSE(q->params_as_QuantizeParams()->per_axis());
  EXPECT_EQ(q->inputs()->size(), 2u);
  EXPECT_EQ(plan->tensors()->Get(q->outputs()->Get(0))->dtype(), fb::DType::UInt8);
  const auto out = run_plan(r.plan, {bytes_of(std::vector<float>{-1.f, 0.f, 1.23f, 25.5f, 99.f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<uint8_t>(out[0]), ElementsAre(0, 0, 12, 255, 255));
  const std::vector<float> y = values_of<float>(out[1]);
  ASSERT_EQ(y.size(), 5u);
  EXPECT_FLOAT_EQ(y[2], 12 * 0.1f);
  EXPECT_FLOAT_EQ(y[3], 255 * 0.1f);
}

TEST(SeqQuant, MistakesNameTheNode) {
  {  // per-axis before opset 13
    ModelBuilder m(10);
    m.input("x", {2, 3}).output("q", onnx::TensorProto::UINT8);
    m.initializer("scale", {3}, {1.f, 1.f, 1.f});
    m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "q10");
    EXPECT_THAT(convert_error(m), HasSubstr("'q10' (QuantizeLinear): scale 'scale' [3] is "
                                            "per-axis, which QuantizeLinear takes from opset 13"));
  }
  {  // scale and zero point of different sizes
    ModelBuilder m(13);
    m.input("q", {2, 3}, onnx::TensorProto::UINT8).output("y");
    m.initializer("scale", {3}, {1.f, 1.f, 1.f});
    u8_initializer(m, "zp", {1}, {0});
    m.node("DequantizeLinear", {"q", "scale", "zp"}, {"y"}, "dq");
    EXPECT_THAT(convert_error(m), HasSubstr("'dq' (DequantizeLinear): shape mismatch"));
  }
  {  // per-axis extent that is not the axis'
    ModelBuilder m(13);
    m.input("x", {2, 3}).output("q", onnx::TensorProto::UINT8);
    m.initializer("scale", {2}, {1.f, 1.f});
    m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "qa");
    EXPECT_THAT(convert_error(m), HasSubstr("'qa' (QuantizeLinear): shape mismatch: scale "
                                            "'scale' has 2 entries for axis 1 of [2,3]"));
  }
}

TEST(SeqQuant, Int32DequantizeIsUnsupported) {
  ModelBuilder m(13);
  m.input("q", {4}, onnx::TensorProto::INT32).output("y");
  m.initializer("scale", {}, {0.5f});
  m.node("DequantizeLinear", {"q", "scale"}, {"y"}, "dq32");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'dq32' (DequantizeLinear): input 'q' is int32 and computed at run "
                        "time (jetplan dequantizes int32 constants only)"));
}

// A QDQ model keeps its weights as int8 and its bias as int32 behind DequantizeLinear: those
// fold into float32 constants, so the Conv sees plain weights (and BatchNorm folding, fusion).
TEST(SeqQuant, DequantizeOfConstantsFolds) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 4, 4}).output("y");
  i8_initializer(m, "w_q", {3, 2, 1, 1}, {1, -2, 3, -4, 127, -128});
  m.initializer("w_scale", {3}, {0.5f, 0.25f, 2.f});
  i8_initializer(m, "w_zp", {3}, {0, 1, -1});
  typed_initializer(m, "b_q", onnx::TensorProto::INT32, {3}, std::vector<int32_t>{100, -7, 0});
  m.initializer("b_scale", {3}, {0.01f, 0.5f, 3.f});
  auto& dqw = m.node("DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}, "dq_w");
  attr(dqw, "axis", int64_t{0});  // per output channel
  auto& dqb = m.node("DequantizeLinear", {"b_q", "b_scale"}, {"b"}, "dq_b");
  attr(dqb, "axis", int64_t{0});
  m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  const ConvertResult r = convert_and_load(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan), ElementsAre(fb::OpFamily::Conv));
  const fb::Step* conv = plan->steps()->Get(0);
  ASSERT_EQ(conv->inputs()->size(), 3u);
  EXPECT_THAT(weight_values(plan, conv->inputs()->Get(1)),
              ElementsAre(0.5f, -1.f, 0.5f, -1.25f, 256.f, -254.f));
  EXPECT_THAT(weight_values(plan, conv->inputs()->Get(2)), ElementsAre(1.f, -3.5f, 0.f));
}

// Naive QLinearMatMul for uint8 operands, per-tensor a and y, per-column or per-tensor b.
std::vector<uint8_t> reference_qmatmul(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                       int64_t M, int64_t K, int64_t N, float a_scale, int a_zp,
                                       const std::vector<float>& b_scale,
                                       const std::vector<int>& b_zp, float y_scale, int y_zp) {
  std::vector<uint8_t> y(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const size_t c = b_scale.size() == 1 ? 0 : n;
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (a[m * K + k] - a_zp) * (b[k * N + n] - b_zp[c]);
      const double v = std::nearbyint(acc * (double{a_scale} * b_scale[c] / y_scale)) + y_zp;
      y[m * N + n] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v)));
    }
  return y;
}

TEST(SeqQLinear, MatMulVectorOperandGetsViewsAndAConstantZeroPointIsWidened) {
  const std::vector<uint8_t> b = {10, 200, 30, 40, 5, 60, 70, 8, 90, 100, 110, 0};  // [4, 3]
  ModelBuilder m(10);
  m.input("a", {4}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("a_scale", {}, {0.02f}).initializer("y_scale", {}, {0.05f});
  m.initializer("b_scale", {3}, {0.01f, 0.03f, 0.02f});
  u8_initializer(m, "a_zp", {}, {128});
  u8_initializer(m, "b_zp", {}, {50});  // per-tensor while b_scale is per column
  u8_initializer(m, "y_zp", {}, {100});
  u8_initializer(m, "b", {4, 3}, b);
  m.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"},
         {"y"}, "qmm");
  const ConvertResult r = convert_and_load(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  std::vector<fb::OpFamily> ops = step_ops(plan);
  EXPECT_THAT(ops,
              ElementsAre(fb::OpFamily::Copy, fb::OpFamily::QLinearMatMul, fb::OpFamily::Copy));
  const fb::Step* s = only_step(plan, fb::OpFamily::QLinearMatMul);
  ASSERT_NE(s, nullptr);
  EXPECT_THAT(tensor_shape(plan, s->inputs()->Get(0)), ElementsAre(1, 4));
  EXPECT_THAT(tensor_shape(plan, s->inputs()->Get(5)), ElementsAre(3));  // widened b_zp
  EXPECT_THAT(tensor_shape(plan, s->outputs()->Get(0)), ElementsAre(1, 3));

  const std::vector<uint8_t> a = {0, 255, 128, 77};
  const auto out = run_plan(r.plan, {bytes_of(a)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], reference_qmatmul(a, b, 1, 4, 3, 0.02f, 128, {0.01f, 0.03f, 0.02f},
                                      {50, 50, 50}, 0.05f, 100));
}

TEST(SeqQLinear, MatMulPartialBatchBroadcastIsUnsupported) {
  ModelBuilder m(10);
  m.input("a", {2, 1, 2, 4}, onnx::TensorProto::UINT8);
  m.input("b", {1, 3, 4, 3}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("s", {}, {0.1f});
  u8_initializer(m, "zp", {}, {0});
  m.node("QLinearMatMul", {"a", "s", "zp", "b", "s", "zp", "s", "zp"}, {"y"}, "qmm");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'qmm' (QLinearMatMul): batch dims [2,1] broadcast partially to [2,3]"));
}

TEST(SeqQLinear, ConvPerChannelWithBiasMatchesTheReference) {
  // x [1, 2, 5, 5] uint8, w [3, 2, 3, 3] int8 per channel, pads 1, stride 2 -> y [1, 3, 3, 3].
  std::vector<uint8_t> x(50);
  std::vector<int8_t> w(54);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>((i * 37) % 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 53) % 256 - 128);
  const std::vector<int32_t> bias = {1000, -2000, 0};
  const std::vector<float> w_scale = {0.01f, 0.002f, 0.005f};
  ModelBuilder m(10);
  m.input("x", {1, 2, 5, 5}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("x_scale", {}, {0.05f}).initializer("y_scale", {}, {0.5f});
  m.initializer("w_scale", {3}, w_scale);
  u8_initializer(m, "x_zp", {}, {7});
  i8_initializer(m, "w_zp", {}, {-1});
  u8_initializer(m, "y_zp", {}, {120});
  i8_initializer(m, "w", {3, 2, 3, 3}, w);
  typed_initializer(m, "bias", onnx::TensorProto::INT32, {3}, bias);
  auto& n = m.node("QLinearConv",
                   {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"},
                   {"y"}, "qconv");
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  attr(n, "strides", std::vector<int64_t>{2, 2});
  const auto& [r, plan, s] = convert_to_step(m, fb::OpFamily::QLinearConv);
  ASSERT_NE(s, nullptr);
  const fb::QLinearConvParams* p = s->params_as_QLinearConvParams();
  EXPECT_TRUE(p->has_bias());
  EXPECT_THAT(std::vector<int64_t>(p->pad_begin()->begin(), p->pad_begin()->end()),
              ElementsAre(1, 1));
  EXPECT_EQ(s->inputs()->size(), 9u);
  EXPECT_THAT(tensor_shape(plan, s->inputs()->Get(5)), ElementsAre(3));  // widened w_zp

  const auto out = run_plan(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<uint8_t> want(27);
  for (int oc = 0; oc < 3; ++oc)
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox) {
        int64_t acc = bias[oc];
        for (int ic = 0; ic < 2; ++ic)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
              acc += (x[(ic * 5 + iy) * 5 + ix] - 7) * (w[((oc * 2 + ic) * 3 + ky) * 3 + kx] + 1);
            }
        const double v =
            std::nearbyint(acc * (double{0.05f} * double{w_scale[oc]} / double{0.5f})) + 120;
        want[(oc * 3 + oy) * 3 + ox] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v)));
      }
  EXPECT_EQ(out[0], want);
}

TEST(SeqQLinear, ConvRunTimeZeroPointWithPerChannelScaleIsUnsupported) {
  ModelBuilder m(10);
  m.input("x", {1, 1, 4, 4}, onnx::TensorProto::UINT8);
  m.input("w_zp", {}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("s", {}, {0.1f}).initializer("w_scale", {2}, {0.1f, 0.2f});
  u8_initializer(m, "zp", {}, {0});
  u8_initializer(m, "w", {2, 1, 1, 1}, {1, 2});
  m.node("QLinearConv", {"x", "s", "zp", "w", "w_scale", "w_zp", "s", "zp"}, {"y"}, "qc");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'qc' (QLinearConv): 'w_zp' is per-tensor and computed at run time"));
}

// ------------------------------------------------------------------------ integer products

TEST(SeqInteger, MatMulIntegerRunsAsDequantizeGemmCast) {
  // A [2, 3, 4] int8 at run time, B [4, 5] uint8 constant with per-column zero points.
  std::vector<uint8_t> b(20);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>((i * 71 + 13) % 256);
  const std::vector<uint8_t> b_zp = {0, 128, 255, 7, 64};
  ModelBuilder m(10);
  m.input("a", {2, 3, 4}, onnx::TensorProto::INT8).output("y", onnx::TensorProto::INT32);
  i8_initializer(m, "a_zp", {}, {-3});
  u8_initializer(m, "b", {4, 5}, b);
  u8_initializer(m, "b_zp", {5}, b_zp);
  m.node("MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"y"}, "mmi");
  const ConvertResult r = convert_and_load(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  // B and its zero points fold into one float32 constant: no step dequantizes them.
  EXPECT_THAT(step_ops(plan),
              ElementsAre(fb::OpFamily::Dequantize, fb::OpFamily::Gemm, fb::OpFamily::Cast));
  const fb::Step* gemm = only_step(plan, fb::OpFamily::Gemm);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(plan->tensors()->Get(gemm->inputs()->Get(1))->storage(), fb::Storage::Weight);
  EXPECT_EQ(plan->tensors()->Get(gemm->inputs()->Get(1))->dtype(), fb::DType::Float32);

  std::vector<int8_t> a(24);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i * 29 % 256 - 128);
  const auto out = run_plan(r.plan, {bytes_of(a)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int32_t> want(30);
  for (int bi = 0; bi < 2; ++bi)
    for (int i = 0; i < 3; ++i)
      for (int n = 0; n < 5; ++n) {
        int32_t acc = 0;
        for (int k = 0; k < 4; ++k) acc += (a[(bi * 3 + i) * 4 + k] + 3) * (b[k * 5 + n] - b_zp[n]);
        want[(bi * 3 + i) * 5 + n] = acc;
      }
  EXPECT_EQ(values_of<int32_t>(out[0]), want);
}

TEST(SeqInteger, SumsBeyondFloatPrecisionAreRefused) {
  ModelBuilder m(10);
  m.input("a", {2, 300}, onnx::TensorProto::UINT8);
  m.input("b", {300, 2}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::INT32);
  m.node("MatMulInteger", {"a", "b"}, {"y"}, "big");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'big' (MatMulInteger): its int32 sums may reach 19507500, beyond "
                        "float32's exact integers"));
}

TEST(SeqInteger, ConvIntegerPerChannelZeroPoints) {
  // x [1, 1, 4, 4] uint8 at run time, w [2, 1, 2, 2] int8 with per-channel zero points, pads 1.
  const std::vector<int8_t> w = {1, -2, 3, -4, 127, -128, 0, 5};
  ModelBuilder m(10);
  m.input("x", {1, 1, 4, 4}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::INT32);
  i8_initializer(m, "w", {2, 1, 2, 2}, w);
  u8_initializer(m, "x_zp", {}, {9});
  i8_initializer(m, "w_zp", {2}, {1, -1});
  auto& n = m.node("ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"}, "ci");
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  const ConvertResult r = convert_and_load(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan),
              ElementsAre(fb::OpFamily::Dequantize, fb::OpFamily::Conv, fb::OpFamily::Cast));
  std::vector<uint8_t> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 17);
  const auto out = run_plan(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int32_t> want(2 * 5 * 5);
  const int w_zp[2] = {1, -1};
  for (int oc = 0; oc < 2; ++oc)
    for (int oy = 0; oy < 5; ++oy)
      for (int ox = 0; ox < 5; ++ox) {
        int32_t acc = 0;  // padding is x_zp: it adds nothing
        for (int ky = 0; ky < 2; ++ky)
          for (int kx = 0; kx < 2; ++kx) {
            const int iy = oy - 1 + ky, ix = ox - 1 + kx;
            if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
            acc += (x[iy * 4 + ix] - 9) * (w[(oc * 2 + ky) * 2 + kx] - w_zp[oc]);
          }
        want[(oc * 5 + oy) * 5 + ox] = acc;
      }
  EXPECT_EQ(values_of<int32_t>(out[0]), want);
}

}  // namespace
}  // namespace jetplan::converter::testing
