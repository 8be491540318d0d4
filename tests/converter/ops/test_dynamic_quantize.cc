// DynamicQuantizeLinear end to end: one step with three outputs, feeding a DequantizeLinear.
#include <gmock/gmock.h>

#include <cstdint>
#include <vector>

#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

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
