// The ops that joined the coverage late, end to end through the converter and the runtime:
// data movement of every plan dtype (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Concat),
// PRelu and Selu; checked against values worked out here.
#include <gmock/gmock.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/ops/check.h"
#include "tests/converter/run_util.h"
#include "tests/converter/test_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- data movement of any dtype

TEST(DataMovement, ShapeOnlyOpsAndConcatTakeEveryPlanDtype) {
  ModelBuilder m(13);
  m.input("i", {2, 3}, onnx::TensorProto::INT64)
      .input("b", {2, 1}, onnx::TensorProto::BOOL)
      .input("c", {2, 2}, onnx::TensorProto::BOOL)
      .input("u", {4}, onnx::TensorProto::UINT8)
      .output("r", onnx::TensorProto::INT64)
      .output("cat", onnx::TensorProto::BOOL)
      .output("id", onnx::TensorProto::UINT8);
  m.initializer_i64("shape", {2}, {3, 2});
  m.initializer_i64("axes", {1}, {0});
  m.node("Reshape", {"i", "shape"}, {"i32"}, "reshape_i64");
  m.node("Unsqueeze", {"i32", "axes"}, {"i132"}, "unsqueeze_i64");
  m.node("Flatten", {"i132"}, {"r"}, "flatten_i64");  // axis 1: [1, 6]
  attr(m.node("Concat", {"b", "c"}, {"cat"}, "concat_bool"), "axis", int64_t{1});
  m.node("Identity", {"u"}, {"id"}, "identity_u8");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<int64_t>{1, -2, 3, -4, 5, 1LL << 40}),
                                bytes_of(std::vector<uint8_t>{1, 0}),
                                bytes_of(std::vector<uint8_t>{0, 1, 1, 0}),
                                bytes_of(std::vector<uint8_t>{7, 0, 255, 9})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_THAT(values_of<int64_t>(out[0]), ElementsAre(1, -2, 3, -4, 5, 1LL << 40));
  EXPECT_THAT(out[1], ElementsAre(1, 0, 1, 0, 1, 0));  // rows [1 | 0 1] and [0 | 1 0]
  EXPECT_THAT(out[2], ElementsAre(7, 0, 255, 9));
  bool found = false;
  for (const auto* t : *c.fb->tensors()) {
    if (t->name()->str() != "r") continue;
    found = true;
    EXPECT_EQ(t->dtype(), fb::DType::Int64);
  }
  EXPECT_TRUE(found);
}

TEST(DataMovement, ConcatOfMixedDtypesNamesBoth) {
  // ONNX's checker refuses such a model; the check function is the converter's own line.
  ModelBuilder m(13);
  m.input("a", {2}).input("b", {2}).output("y");
  attr(m.node("Concat", {"a", "b"}, {"y"}, "cat"), "axis", int64_t{0});
  Graph g = import_onnx(m.bytes(), {});
  g.values[g.nodes[0].inputs[1]].dtype = DataType::kInt32;
  EXPECT_EQ(find_check("Concat")(g, g.nodes[0]), "inputs differ in dtype (float32 and int32)");
}

// ------------------------------------------------------------------------------ PRelu, Selu

TEST(PReluSelu, PReluSlopePerChannelAfterAConvStaysItsOwnStep) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 1, 2}).output("y");
  m.initializer("w", {2, 2, 1, 1}, {1, 0, 0, 1});  // identity 1x1 conv
  m.initializer("slope", {2, 1, 1}, {0.5f, -2.f});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("PRelu", {"c", "slope"}, {"y"}, "prelu");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(step_ops(c.fb), ElementsAre(fb::OpFamily::Conv, fb::OpFamily::Binary));
  const fb::Step* prelu = find_step(c.fb, "prelu");
  ASSERT_NE(prelu, nullptr);
  EXPECT_EQ(prelu->params_as_BinaryParams()->op(), fb::BinaryOp::PRelu);
  const auto out = run(c.plan, {bytes_of(std::vector<float>{-2, 3, -1, -4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(-1, 3, 2, 8));
}

TEST(PReluSelu, PReluSlopeMustBroadcastToX) {
  ModelBuilder m(13);
  m.input("x", {3}).output("y");
  m.initializer("slope", {2, 3}, {1, 1, 1, 1, 1, 1});
  m.node("PRelu", {"x", "slope"}, {"y"}, "prelu_wide");
  const std::string error = convert_error(m);
  EXPECT_THAT(error, HasSubstr("prelu_wide"));
  EXPECT_THAT(error, HasSubstr("does not broadcast to X"));
}

TEST(PReluSelu, OpsetSixSlopeOfTheChannelCountIsPerChannel) {
  // Before opset 7 a slope [C] scales channel c (dim 1); the upgrade makes it [C, 1, 1].
  ModelBuilder m(6);
  m.input("x", {1, 2, 1, 2}).output("y");
  m.initializer("slope", {2}, {0.5f, -2.f});
  m.node("PRelu", {"x", "slope"}, {"y"}, "prelu6");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<float>{-2, 3, -1, -4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_THAT(values_of<float>(out[0]), ElementsAre(-1, 3, 2, 8));
}

TEST(PReluSelu, SeluFusesIntoTheConvWithAlphaAndGamma) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 1, 3}).output("y");
  m.initializer("w", {1, 1, 1, 1}, {1});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  auto& selu = m.node("Selu", {"c"}, {"y"}, "selu");
  attr(selu, "alpha", 2.f);
  attr(selu, "gamma", 3.f);
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  ASSERT_THAT(step_ops(c.fb), ElementsAre(fb::OpFamily::Conv));
  const fb::Activation* act = c.fb->steps()->Get(0)->params_as_ConvParams()->activation();
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->kind(), fb::ActivationKind::Selu);
  EXPECT_EQ(act->alpha(), 2.f);
  EXPECT_EQ(act->beta(), 3.f);
  const auto out = run(c.plan, {bytes_of(std::vector<float>{-1, 0, 1})});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> y = values_of<float>(out[0]);
  ASSERT_EQ(y.size(), 3u);
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(3 * (2 * std::exp(-1.0) - 2)));
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[2], 3.f);
}

// ------------------------------------------------------------------- DynamicQuantizeLinear

TEST(DynamicQuantize, OneStepWithThreeOutputsFeedsADequantize) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("y", onnx::TensorProto::UINT8)
      .output("scale").output("zp", onnx::TensorProto::UINT8).output("back");
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"}, "dql");
  m.node("DequantizeLinear", {"y", "scale", "zp"}, {"back"}, "dq");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  EXPECT_THAT(step_ops(c.fb),
              ElementsAre(fb::OpFamily::DynamicQuantize, fb::OpFamily::Dequantize));
  // ONNX's example: range [-3, 2], scale 5 / 255, zero point 153.
  const std::vector<float> x = {0, 2, -3, -2.5f, 1.34f, 0.5f};
  const auto out = run(c.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(out[0], ElementsAre(153, 255, 0, 26, 221, 179));
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(5.f / 255.f));
  EXPECT_THAT(out[2], ElementsAre(153));
  const std::vector<float> back = values_of<float>(out[3]);
  ASSERT_EQ(back.size(), x.size());
  // Within half a step (0.5 is a tie: 25.5 steps round to 26), plus float rounding.
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(back[i], x[i], 0.50001 * 5 / 255.) << i;
}

}  // namespace
}  // namespace jetplan::converter::testing
