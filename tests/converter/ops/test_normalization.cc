// The normalizations end to end in process: InstanceNormalization, LRN, LayerNormalization
// (broadcast scale, statistics outputs, refusals), RMSNormalization (opset 23) and
// GroupNormalization (opsets 18 and 21).
#include "tests/converter/util/ir_model_util.h"

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
  const std::vector<uint8_t> bytes = converted_plan(m);
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
    const auto& [r, plan, s] = convert_to_first_step(m, OpFamily::LayerNorm);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_LayerNormParams();
    EXPECT_EQ(p->has_mean(), mean);
    EXPECT_EQ(p->has_inv_std_dev(), inv);
    EXPECT_EQ(s->outputs()->size(), 1u + mean + inv);
    // The [3] scale and [1] bias are expanded to the normalized shape [2, 3].
    EXPECT_EQ(tensor_shape(plan, s->inputs()->Get(1)), (Shape{2, 3}));
    EXPECT_EQ(weight_values(plan, s->inputs()->Get(2)), std::vector<float>(6, 0.5f));
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, -1, -1, 1, 1, 1};
    const std::vector<Output> out = run_plan(r.plan, {x});
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

// RMSNormalization (opset 23) is the LayerNorm step with rms set: no mean subtracted, the scale
// expanded to the normalized shape, no bias; refused like LayerNormalization.
TEST(Norms, RmsNormalizationIsTheRmsLayerNorm) {
  ModelBuilder m(23);
  m.input("x", {2, 2, 3}).output("y");
  m.initializer("scale", {3}, {1.f, 2.f, -1.f});
  auto& n = m.node("RMSNormalization", {"x", "scale"}, {"y"}, "rms");
  attr(n, "axis", int64_t{1});
  attr(n, "epsilon", 0.f);
  const auto& [r, plan, s] = convert_to_first_step(m, OpFamily::LayerNorm);
  ASSERT_NE(s, nullptr);
  const auto* p = s->params_as_LayerNormParams();
  EXPECT_TRUE(p->rms());
  EXPECT_FALSE(p->has_bias());
  EXPECT_FALSE(p->has_mean());
  EXPECT_EQ(p->axis(), 1);
  EXPECT_EQ(tensor_shape(plan, s->inputs()->Get(1)), (Shape{2, 3}));
  // Row 0: 1..6, mean of squares 91 / 6; row 1: every element 2 (rms 2, mean not subtracted).
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 2, -2, 2, -2, 2, -2};
  const std::vector<Output> out = run_plan(r.plan, {x});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> y = out[0].as<float>();
  const float r0 = 1.f / std::sqrt(91.f / 6.f);
  expect_near(y, {1 * r0, 4 * r0, -3 * r0, 4 * r0, 10 * r0, -6 * r0, 1, -2, -1, -1, 2, 1},
              1e-5f);

  ModelBuilder bad(23);
  bad.input("x", {2, 3}).input("s", {1}).output("y").output("z");
  bad.initializer("ones", {3}, {1, 1, 1});
  bad.node("RMSNormalization", {"x", "s"}, {"y"}, "runtime_broadcast");
  attr(bad.node("RMSNormalization", {"x", "ones"}, {"z"}, "stash"), "stash_type", int64_t{10});
  const std::string e = convert_error(bad);
  EXPECT_THAT(e, HasSubstr("2 unsupported nodes"));
  EXPECT_THAT(e, HasSubstr("'runtime_broadcast' (RMSNormalization): its input 's' [1] "
                           "broadcasts to the normalized shape and is computed at run time"));
  EXPECT_THAT(e, HasSubstr("'stash' (RMSNormalization): stash_type=10"));
  // Opset 22 has no RMSNormalization.
  ModelBuilder old(22);
  old.input("x", {2, 3}).output("y");
  old.initializer("ones", {3}, {1, 1, 1});
  old.node("RMSNormalization", {"x", "ones"}, {"y"}, "early");
  EXPECT_THAT(convert_error(old), HasSubstr("RMSNormalization is not an op of opset 22"));
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
}  // namespace
}  // namespace jetplan::converter::testing
