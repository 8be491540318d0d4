// PRelu and Selu end to end through the converter and the runtime, checked against values
// worked out here.
#include <gmock/gmock.h>

#include <cmath>
#include <vector>

#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

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
  EXPECT_THAT(convert_error(m),
              AllOf(HasSubstr("prelu_wide"),
                    HasSubstr("does not broadcast to X")));
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
}  // namespace
}  // namespace jetplan::converter::testing
