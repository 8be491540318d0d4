// ConvTranspose end to end in process: pads from output_shape and auto_pad, groups, bias,
// output_padding, 1 to 3 spatial dims, and bad attributes named with the node.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// ------------------------------------------------------------------------ ConvTranspose

// y[n, oc, o] = bias[oc] + sum x[n, ic, i] * w[ic, oc % (OC / g), k], o = i * s - pb + k * d (2-D).
std::vector<float> conv_transpose_ref(const std::vector<float>& x, const Shape& xs,
                                      const std::vector<float>& w, const Shape& ws,
                                      const std::vector<float>& bias, int64_t groups,
                                      const Shape& stride, const Shape& pad_begin,
                                      const Shape& ys) {
  std::vector<double> y(static_cast<size_t>(shape_count(ys)), 0.0);
  const int64_t in_per_group = xs[1] / groups, out_per_group = ws[1];
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t ic = 0; ic < xs[1]; ++ic)
      for (int64_t i0 = 0; i0 < xs[2]; ++i0)
        for (int64_t i1 = 0; i1 < xs[3]; ++i1)
          for (int64_t m = 0; m < out_per_group; ++m)
            for (int64_t k0 = 0; k0 < ws[2]; ++k0)
              for (int64_t k1 = 0; k1 < ws[3]; ++k1) {
                const int64_t o0 = i0 * stride[0] - pad_begin[0] + k0;
                const int64_t o1 = i1 * stride[1] - pad_begin[1] + k1;
                if (o0 < 0 || o0 >= ys[2] || o1 < 0 || o1 >= ys[3]) continue;
                const int64_t oc = (ic / in_per_group) * out_per_group + m;
                y[((n * ys[1] + oc) * ys[2] + o0) * ys[3] + o1] +=
                    x[((n * xs[1] + ic) * xs[2] + i0) * xs[3] + i1] *
                    w[((ic * ws[1] + m) * ws[2] + k0) * ws[3] + k1];
              }
  std::vector<float> out(y.size());
  const int64_t plane = ys[2] * ys[3];
  for (size_t i = 0; i < y.size(); ++i)
    out[i] = static_cast<float>(y[i] + (bias.empty() ? 0.0 : bias[(i / plane) % ys[1]]));
  return out;
}

TEST(ConvTranspose, PadsFromOutputShapeAndAutoPad) {
  struct Case {
    const char* auto_pad;
    std::vector<int64_t> output_shape;
    Shape out, pad_begin, pad_end;
  };
  // x 3x3, kernel 3, strides 2x3: the full transposed convolution is 7x9.
  for (const Case& c : {Case{"SAME_UPPER", {}, {6, 9}, {0, 0}, {1, 0}},
                        Case{"SAME_LOWER", {}, {6, 9}, {1, 0}, {0, 0}},
                        Case{"NOTSET", {8, 9}, {8, 9}, {0, 0}, {-1, 0}},
                        Case{"NOTSET", {5, 7}, {5, 7}, {1, 1}, {1, 1}},
                        Case{"VALID", {}, {7, 9}, {0, 0}, {0, 0}}}) {
    SCOPED_TRACE(c.auto_pad);
    ModelBuilder m(11);
    m.input("x", {1, 2, 3, 3}).output("y");
    m.random("w", {2, 3, 3, 3});
    auto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
    attr(n, "strides", std::vector<int64_t>{2, 3});
    attr(n, "auto_pad", std::string(c.auto_pad));
    if (!c.output_shape.empty()) attr(n, "output_shape", c.output_shape);
    const auto& [r, plan, s] = convert_to_first_step(m, OpFamily::ConvTranspose);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_ConvTransposeParams();
    EXPECT_EQ(vec(p->pad_begin()), c.pad_begin);
    EXPECT_EQ(vec(p->pad_end()), c.pad_end);
    EXPECT_FALSE(p->has_bias());
    EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()),
              (Shape{1, 3, c.out[0], c.out[1]}));
  }
}

TEST(ConvTranspose, GroupsBiasPadsAndOutputPaddingComputeTheAdjoint) {
  ModelBuilder m(13);
  m.input("x", {2, 4, 3, 4}).output("y");
  m.random("w", {4, 3, 3, 2}).random("b", {6});
  auto& n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"}, "up");
  attr(n, "group", int64_t{2});
  attr(n, "strides", std::vector<int64_t>{2, 3});
  attr(n, "pads", std::vector<int64_t>{1, 0, 0, 2});
  attr(n, "output_padding", std::vector<int64_t>{1, 2});
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  // H: 2 * 2 + 1 + 3 - 1 = 7; W: 3 * 3 + 2 + 2 - 2 = 11.
  const Shape ys = tensor_shape(plan, plan->outputs()->Get(0)->tensor());
  ASSERT_EQ(ys, (Shape{2, 6, 7, 11}));
  const auto* p = first_step(plan, OpFamily::ConvTranspose)->params_as_ConvTransposeParams();
  EXPECT_TRUE(p->has_bias());
  EXPECT_EQ(p->groups(), 2);
  EXPECT_EQ(vec(p->output_padding()), (Shape{1, 2}));
  const std::vector<float> x = ramp(2 * 4 * 3 * 4);
  const std::vector<float> w =
      weight_values(plan, first_step(plan, OpFamily::ConvTranspose)->inputs()->Get(1));
  const std::vector<float> b =
      weight_values(plan, first_step(plan, OpFamily::ConvTranspose)->inputs()->Get(2));
  const std::vector<Output> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0].as<float>(),
              conv_transpose_ref(x, {2, 4, 3, 4}, w, {4, 3, 3, 2}, b, 2, {2, 3}, {1, 0}, ys),
              1e-5f);
}

TEST(ConvTranspose, OneAndThreeSpatialDims) {
  ModelBuilder m(13);
  m.input("x1", {1, 2, 5}).input("x3", {1, 1, 2, 3, 2}).output("y1").output("y3");
  m.random("w1", {2, 1, 3}).random("w3", {1, 2, 2, 2, 2});
  attr(m.node("ConvTranspose", {"x1", "w1"}, {"y1"}, "t1"), "strides", std::vector<int64_t>{2});
  attr(m.node("ConvTranspose", {"x3", "w3"}, {"y3"}, "t3"), "dilations",
       std::vector<int64_t>{1, 2, 1});
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{1, 1, 11}));
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(1)->tensor()), (Shape{1, 2, 3, 5, 3}));
}

TEST(ConvTranspose, BadAttributesNameTheNode) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 3}).output("y");
  m.random("w", {2, 3, 3, 3});
  auto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "bad_up");
  attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_THAT(convert_error(m), HasSubstr("'bad_up' (ConvTranspose): kernel_shape [2,2] differs"));
}

// ------------------------------------------------------------------------ Col2Im (a ConvTranspose)

// Col2Im [1, 2 * 4, L] into [1, 2, 3, 3] with 2x2 blocks, stride 1: each image element the sum of
// the patch elements that land on it (worked out here); e2e_decomposed_ops_onnxruntime checks
// strides, dilations, pads and 3-D against ONNX Runtime.
TEST(Col2Im, SumsOverlappingPatchesAsOneConvTranspose) {
  ModelBuilder m(18);
  m.input("x", {1, 8, 4}).output("y");
  m.initializer_i64("image", {2}, {3, 3});
  m.initializer_i64("block", {2}, {2, 2});
  m.node("Col2Im", {"x", "image", "block"}, {"y"}, "fold");
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_NE(first_step(plan, OpFamily::ConvTranspose), nullptr);
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i + 1);
  std::vector<float> want(18, 0.f);
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < 4; ++k)      // block element (ky, kx)
      for (int l = 0; l < 4; ++l) {  // block (by, bx)
        const int y = l / 2 + k / 2, xx = l % 2 + k % 2;
        want[size_t(c * 9 + y * 3 + xx)] += x[size_t((c * 4 + k) * 4 + l)];
      }
  const std::vector<PlanOutput> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].as<float>(), want);
}

TEST(Col2Im, RefusalsNameTheNode) {
  ModelBuilder m(18);
  m.input("x", {1, 8, 5}).output("y");  // 2x2 blocks of a 3x3 image: 4 blocks, not 5
  m.initializer_i64("image", {2}, {3, 3});
  m.initializer_i64("block", {2}, {2, 2});
  m.node("Col2Im", {"x", "image", "block"}, {"y"}, "fold");
  EXPECT_THAT(convert_error(m), HasSubstr("'fold' (Col2Im): input [1,8,5] holds no [N, C * 4, 4] "
                                          "patches of the blocks"));
  ModelBuilder r(18);
  r.input("x", {1, 8, 4}).input("image", {2}, onnx::TensorProto::INT64).output("y");
  r.initializer_i64("block", {2}, {2, 2});
  r.node("Col2Im", {"x", "image", "block"}, {"y"}, "fold");
  EXPECT_THAT(convert_error(r), HasSubstr("image_shape input is computed at run time"));
}
}  // namespace
}  // namespace jetplan::converter::testing
