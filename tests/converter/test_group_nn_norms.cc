// The nn group end to end (see test_group_nn.cc): InstanceNorm, LRN, LayerNorm, GroupNorm,
// NonMaxSuppression and pool ceil_mode.
#include "tests/converter/group_nn_util.h"

namespace jetplan::converter::testing {
namespace {

// ------------------------------------------------------------------------- normalizations

TEST(Norms, InstanceNormAndLrnRun) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 4}).output("in").output("lrn");
  m.initializer("s", {2}, {2.f, 0.5f}).initializer("b", {2}, {1.f, -1.f});
  attr(m.node("InstanceNormalization", {"x", "s", "b"}, {"in"}, "inorm"), "epsilon", 0.f);
  auto& l = m.node("LRN", {"x"}, {"lrn"}, "lrn");
  attr(l, "size", int64_t{3});
  attr(l, "alpha", 0.5f);
  const std::vector<uint8_t> bytes = convert_nn(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(first_step(plan, OpFamily::Lrn)->params_as_LrnParams()->size(), 3);
  const std::vector<float> x = {1, 2, 3, 4, 0, 0, 2, 2};
  const std::vector<Output> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 2u);
  // Channel 0: mean 2.5, var 1.25; channel 1: mean 1, var 1.
  const float r = 1.f / std::sqrt(1.25f);
  expect_near(out[0].as<float>(),
              {2 * -1.5f * r + 1, 2 * -0.5f * r + 1, 2 * 0.5f * r + 1, 2 * 1.5f * r + 1, -1.5f,
               -1.5f, -0.5f, -0.5f},
              1e-5f);
  // LRN, size 3 over 2 channels: every element sees both channels' squares.
  std::vector<float> want(8);
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 2; ++c) {
      const double sq = x[s] * x[s] + x[4 + s] * x[4 + s];
      want[c * 4 + s] = static_cast<float>(x[c * 4 + s] / std::pow(1 + 0.5 / 3 * sq, 0.75));
    }
  expect_near(out[1].as<float>(), want, 1e-5f);
}

TEST(Norms, LayerNormBroadcastScaleAndStatisticOutputs) {
  // Which of Mean and InvStdDev the graph reads decides the step's outputs.
  for (int stats = 0; stats < 4; ++stats) {
    SCOPED_TRACE(stats);
    const bool mean = stats & 1, inv = stats & 2;
    ModelBuilder m(17);
    m.input("x", {2, 2, 3}).output("y");
    m.initializer("scale", {3}, {1.f, 2.f, 3.f}).initializer("bias", {1}, {0.5f});
    if (mean) m.output("mean");
    if (inv) m.output("inv");
    auto& n = m.node("LayerNormalization", {"x", "scale", "bias"},
                     {"y", mean ? "mean" : "unused_mean", inv ? "inv" : ""}, "ln");
    attr(n, "axis", int64_t{1});
    attr(n, "epsilon", 0.f);
    const std::vector<uint8_t> bytes = convert_nn(m);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::LayerNorm);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_LayerNormParams();
    EXPECT_EQ(p->has_mean(), mean);
    EXPECT_EQ(p->has_inv_std_dev(), inv);
    EXPECT_EQ(s->outputs()->size(), 1u + mean + inv);
    // The [3] scale and [1] bias are expanded to the normalized shape [2, 3].
    EXPECT_EQ(tensor_shape(plan, s->inputs()->Get(1)), (Shape{2, 3}));
    EXPECT_EQ(weight_values(plan, s->inputs()->Get(2)), std::vector<float>(6, 0.5f));
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, -1, -1, 1, 1, 1};
    const std::vector<Output> out = run_plan(bytes, {x});
    ASSERT_EQ(out.size(), 1u + mean + inv);
    const float r0 = 1.f / std::sqrt(35.f / 12.f);  // row 0: 1..6, mean 3.5
    const std::vector<float> y = out[0].as<float>();
    EXPECT_NEAR(y[0], -2.5f * r0 * 1 + 0.5f, 1e-5);
    EXPECT_NEAR(y[5], 2.5f * r0 * 3 + 0.5f, 1e-5);
    EXPECT_NEAR(y[6], -1 * 1 + 0.5f, 1e-5);  // row 1: -1 x3, 1 x3: std 1
    if (mean) {
      EXPECT_EQ(out[1].dims, (Shape{2, 1, 1}));
      EXPECT_THAT(out[1].as<float>(), ElementsAre(3.5f, 0.f));
    }
    if (inv) {
      EXPECT_EQ(out.back().dims, (Shape{2, 1, 1}));
      const std::vector<float> iv = out.back().as<float>();
      EXPECT_NEAR(iv[0], r0, 1e-6);
      EXPECT_NEAR(iv[1], 1.f, 1e-6);
    }
  }
}

TEST(Norms, LayerNormRefusals) {
  ModelBuilder m(17);
  m.input("x", {2, 3}).input("s", {1}).output("y").output("z");
  m.initializer("ones", {3}, {1, 1, 1});
  m.node("LayerNormalization", {"x", "s"}, {"y"}, "runtime_broadcast");
  attr(m.node("LayerNormalization", {"x", "ones"}, {"z"}, "stash"), "stash_type", int64_t{10});
  const std::string e = convert_error(m);
  EXPECT_THAT(e, HasSubstr("'runtime_broadcast' (LayerNormalization): its input 's' [1] "
                           "broadcasts to the normalized shape and is computed at run time"));
  EXPECT_THAT(e, HasSubstr("'stash' (LayerNormalization): stash_type=10"));
}

TEST(Norms, GroupNormPerGroupAtOpset18PerChannelAtOpset21) {
  for (int opset : {18, 21}) {
    SCOPED_TRACE(opset);
    IrModel ir(opset);
    const int x = ir.input("x", {1, 4, 2});
    const Shape param = {opset == 18 ? 2 : 4};
    const int scale = ir.constant(
        "scale", param, opset == 18 ? std::vector<float>{1, 2} : std::vector<float>{1, 1, 2, 2});
    const int bias = ir.constant("bias", param, std::vector<float>(param[0], 0.f));
    Node& n = ir.node("GroupNormalization", {x, scale, bias}, "y");
    set_attr(n, "num_groups", int64_t{2});
    n.attrs["epsilon"].kind = Attribute::Kind::kFloat;
    n.attrs["epsilon"].f = 0.f;
    ir.output(n.outputs[0]);
    const std::vector<uint8_t> bytes = plan_from_ir(ir.g);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const auto* p = first_step(plan, OpFamily::GroupNorm)->params_as_GroupNormParams();
    EXPECT_EQ(p->groups(), 2);
    EXPECT_EQ(p->affine_per_group(), opset == 18);
    // Group 0: {0, 2, 0, 2}, mean 1, std 1; group 1: {1, 1, 3, 3} mean 2, std 1, scaled by 2.
    const std::vector<float> y = run_plan(bytes, {{0, 2, 0, 2, 1, 1, 3, 3}})[0].as<float>();
    expect_near(y, {-1, 1, -1, 1, -2, -2, 2, 2}, 1e-6f);
  }
  IrModel ir(18);
  const int x = ir.input("x", {1, 6, 2});
  Node& n =
      ir.node("GroupNormalization",
              {x, ir.constant("s", {4}, {1, 1, 1, 1}), ir.constant("b", {4}, {0, 0, 0, 0})}, "y");
  set_attr(n, "num_groups", int64_t{4});
  ir.output(n.outputs[0]);
  EXPECT_THAT(ir_error(ir.g), HasSubstr("'GroupNormalization_node' (GroupNormalization): "
                                        "num_groups 4 does not divide the 6 channels"));
}

// ---------------------------------------------------------------------- NonMaxSuppression

ModelBuilder nms_model(bool read_by_node = false) {
  ModelBuilder m(11);
  m.input("boxes", {1, 4, 4}).input("scores", {1, 2, 4});
  m.output(read_by_node ? "y" : "selected", onnx::TensorProto::INT64);
  m.initializer_i64("max", {1}, {3});
  m.initializer("iou", {1}, {0.5f}).initializer("score", {1}, {0.2f});
  m.node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "score"}, {"selected"}, "nms");
  if (read_by_node) m.node("Identity", {"selected"}, {"y"}, "reader");
  return m;
}

TEST(Nms, RunTimeCountOnTheGraphOutput) {
  const std::vector<uint8_t> bytes = convert_nn(nms_model());
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = first_step(plan, OpFamily::Nms);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->inputs()->size(), 2u);
  ASSERT_EQ(s->outputs()->size(), 2u);
  EXPECT_EQ(s->workspace_bytes(), 4u * sizeof(int64_t));
  const auto* p = s->params_as_NmsParams();
  EXPECT_EQ(p->max_output_per_class(), 3);
  EXPECT_FLOAT_EQ(p->iou_threshold(), 0.5f);
  EXPECT_TRUE(p->has_score_threshold());
  const fb::BindingDesc* out = plan->outputs()->Get(0);
  EXPECT_EQ(out->tensor(), s->outputs()->Get(0));
  EXPECT_EQ(out->count_tensor(), static_cast<int32_t>(s->outputs()->Get(1)));
  EXPECT_EQ(tensor_shape(plan, out->tensor()), (Shape{6, 3}));  // 1 batch x 2 classes x 3
  // Boxes 0 and 1 overlap (IoU 0.81), 2 and 3 are apart. Class 0 keeps 1 then 2 then 3;
  // class 1 keeps 0 (score 0.9) then 3 (0.1 is below the threshold for box 2).
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0, 0.9f, 0.9f, 2, 2, 3, 3, 5, 5, 6, 6};
  const std::vector<float> scores = {0.5f, 0.6f, 0.4f, 0.3f, 0.9f, 0.8f, 0.1f, 0.3f};
  const std::vector<Output> got = run_plan(bytes, {boxes, scores});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].dims, (Shape{5, 3}));
  EXPECT_THAT(got[0].as<int64_t>(), ElementsAre(0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 1, 0, 0, 1, 3));
}

// The C API reads a count after the run: a later step must not reuse its arena bytes.
TEST(Nms, EachCountSurvivesTheStepsAfterIt) {
  ModelBuilder m(11);
  m.input("boxes", {1, 4, 4}).input("scores", {1, 2, 4});
  m.output("three", onnx::TensorProto::INT64).output("one", onnx::TensorProto::INT64);
  m.initializer_i64("max3", {1}, {3}).initializer_i64("max1", {1}, {1});
  m.initializer("iou", {1}, {0.5f}).initializer("score", {1}, {0.2f});
  m.node("NonMaxSuppression", {"boxes", "scores", "max3", "iou", "score"}, {"three"}, "nms3");
  m.node("NonMaxSuppression", {"boxes", "scores", "max1"}, {"one"}, "nms1");
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0, 0.9f, 0.9f, 2, 2, 3, 3, 5, 5, 6, 6};
  const std::vector<float> scores = {0.5f, 0.6f, 0.4f, 0.3f, 0.9f, 0.8f, 0.1f, 0.3f};
  const std::vector<Output> got = run_plan(convert_nn(m), {boxes, scores});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].dims, (Shape{5, 3}));
  EXPECT_EQ(got[1].dims, (Shape{2, 3}));
  EXPECT_THAT(got[1].as<int64_t>(), ElementsAre(0, 0, 1, 0, 1, 0));
}

TEST(Nms, RefusalsGiveTheirReasons) {
  EXPECT_THAT(convert_error(nms_model(true)),
              HasSubstr("'nms' (NonMaxSuppression): its output 'selected' is not a graph output"));
  ModelBuilder m(11);
  m.input("boxes", {1, 4, 4}).input("scores", {1, 2, 4}).input("iou", {1});
  m.output("a", onnx::TensorProto::INT64).output("b", onnx::TensorProto::INT64);
  m.initializer_i64("max", {1}, {3}).initializer_i64("zero", {1}, {0});
  m.node("NonMaxSuppression", {"boxes", "scores", "max", "iou"}, {"a"}, "runtime_iou");
  m.node("NonMaxSuppression", {"boxes", "scores", "zero"}, {"b"}, "empty");
  const std::string e = convert_error(m);
  EXPECT_THAT(e, HasSubstr("'runtime_iou' (NonMaxSuppression): its iou_threshold (a scalar) "
                           "input is computed at run time"));
  EXPECT_THAT(e, HasSubstr("'empty' (NonMaxSuppression): max_output_boxes_per_class is 0: the "
                           "output is always empty"));
}

// ------------------------------------------------------------------------- Pool ceil_mode

TEST(PoolCeilMode, PartialLastWindowRunsAndAWindowInThePaddingIsRefused) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 5, 5}).output("max").output("avg");
  auto& mp = m.node("MaxPool", {"x"}, {"max"}, "maxpool");
  attr(mp, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(mp, "strides", std::vector<int64_t>{2, 2});
  attr(mp, "ceil_mode", int64_t{1});
  auto& ap = m.node("AveragePool", {"x"}, {"avg"}, "avgpool");
  attr(ap, "kernel_shape", std::vector<int64_t>{3, 3});
  attr(ap, "strides", std::vector<int64_t>{3, 3});
  attr(ap, "ceil_mode", int64_t{1});
  const std::vector<uint8_t> bytes = convert_onnx(m.bytes(), "m.onnx", {}).plan;
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_TRUE(first_step(plan, OpFamily::Pool)->params_as_PoolParams()->ceil_mode());
  std::vector<float> x(25);
  std::iota(x.begin(), x.end(), 0.f);
  const std::vector<Output> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dims, (Shape{1, 1, 3, 3}));
  EXPECT_THAT(out[0].as<float>(), ElementsAre(6, 8, 9, 16, 18, 19, 21, 23, 24));
  // The last 3x3 window holds 2 rows or columns of the input: its average divides by those.
  EXPECT_EQ(out[1].dims, (Shape{1, 1, 2, 2}));
  EXPECT_THAT(out[1].as<float>(), ElementsAre(6, 8.5f, 18.5f, 21));

  ModelBuilder pad(13);
  pad.input("x", {1, 1, 4, 4}).output("y");
  auto& p = pad.node("MaxPool", {"x"}, {"y"}, "into_padding");
  attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(p, "strides", std::vector<int64_t>{2, 2});
  attr(p, "pads", std::vector<int64_t>{0, 0, 1, 1});
  attr(p, "ceil_mode", int64_t{1});
  EXPECT_THAT(convert_error(pad), HasSubstr("'into_padding' (MaxPool): ceil_mode=1 here starts "
                                            "the last window of spatial dim 0 inside the end "
                                            "padding"));
}

}  // namespace
}  // namespace jetplan::converter::testing
