// Pool ceil_mode end to end in process: a partial last window runs; a window that would start in
// the end padding is refused.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

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
