// The Reduce* ops and ArgMax/ArgMin end to end in process: keepdims=0 views, every op, the axes
// input, refusals.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// --------------------------------------------------------------------- Reduce, ArgMax/Min

TEST(Reduce, KeepdimsZeroIsAStepAndACopyView) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("y");
  auto& n = m.node("ReduceMean", {"x"}, {"y"}, "mean");
  attr(n, "axes", std::vector<int64_t>{-1, 0});
  attr(n, "keepdims", int64_t{0});
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan), ElementsAre(OpFamily::Reduce, OpFamily::Copy));
  const fb::Step* s = first_step(plan, OpFamily::Reduce);
  EXPECT_EQ(s->params_as_ReduceParams()->op(), fb::ReduceOp::Mean);
  EXPECT_THAT(*s->params_as_ReduceParams()->axes(), ElementsAre(0, 2));
  EXPECT_EQ(tensor_shape(plan, s->outputs()->Get(0)), (Shape{1, 3, 1}));
  EXPECT_EQ(plan->steps()->Get(1)->name()->str(), "mean:squeeze");
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{3}));
  const std::vector<float> x = ramp(24);
  const std::vector<float> y = run_plan(bytes, {x})[0].as<float>();
  ASSERT_EQ(y.size(), 3u);
  for (int c = 0; c < 3; ++c) {
    double sum = 0;
    for (int b = 0; b < 2; ++b)
      for (int k = 0; k < 4; ++k) sum += x[(b * 3 + c) * 4 + k];
    EXPECT_NEAR(y[c], sum / 8, 1e-6);
  }
}

TEST(Reduce, EveryOpAndTheAxesInputOfOpset13) {
  const std::pair<const char*, fb::ReduceOp> ops[] = {
      {"ReduceL1", fb::ReduceOp::L1},         {"ReduceL2", fb::ReduceOp::L2},
      {"ReduceLogSum", fb::ReduceOp::LogSum}, {"ReduceLogSumExp", fb::ReduceOp::LogSumExp},
      {"ReduceMax", fb::ReduceOp::Max},       {"ReduceMin", fb::ReduceOp::Min},
      {"ReduceProd", fb::ReduceOp::Prod},     {"ReduceSumSquare", fb::ReduceOp::SumSquare}};
  const std::vector<float> x = {1, 2, 3, 4, 0.5f, 0.25f};  // [2, 3], reduced over dim 1
  const double want[][2] = {{6, 4.75},
                            {std::sqrt(14.0), std::sqrt(16.3125)},
                            {std::log(6.0), std::log(4.75)},
                            {std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)),
                             std::log(std::exp(4.0) + std::exp(0.5) + std::exp(0.25))},
                            {3, 4},
                            {1, 0.25},
                            {6, 0.5},
                            {14, 16.3125}};
  for (size_t i = 0; i < std::size(ops); ++i) {
    SCOPED_TRACE(ops[i].first);
    ModelBuilder m(13);
    m.input("x", {2, 3}).output("y");
    attr(m.node(ops[i].first, {"x"}, {"y"}, "r"), "axes", std::vector<int64_t>{1});
    const std::vector<uint8_t> bytes = converted_plan(m);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(first_step(plan, OpFamily::Reduce)->params_as_ReduceParams()->op(), ops[i].second);
    const std::vector<float> y = run_plan(bytes, {x})[0].as<float>();
    ASSERT_EQ(y.size(), 2u);
    EXPECT_NEAR(y[0], want[i][0], 1e-5 * std::fabs(want[i][0]));
    EXPECT_NEAR(y[1], want[i][1], 1e-5 * std::fabs(want[i][1]));
  }
  // ReduceSum takes its axes as a (constant) input since opset 13; none reduces everything.
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("y").output("all");
  m.initializer_i64("axes", {1}, {0});
  m.node("ReduceSum", {"x", "axes"}, {"y"}, "sum");
  m.node("ReduceSum", {"x"}, {"all"}, "sum_all");
  const std::vector<Output> out = run_plan(converted_plan(m), {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(5, 2.5f, 3.25f));
  EXPECT_EQ(out[0].dims, (Shape{1, 3}));
  EXPECT_THAT(out[1].as<float>(), ElementsAre(10.75f));
  EXPECT_EQ(out[1].dims, (Shape{1, 1}));
}

TEST(Reduce, EmptyAxesWithNoopIsNoStep) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("y");
  m.initializer_i64("axes", {0}, {});
  auto& n = m.node("ReduceSum", {"x", "axes"}, {"r"}, "noop");
  attr(n, "noop_with_empty_axes", int64_t{1});
  m.node("Relu", {"r"}, {"y"}, "relu");
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan), ElementsAre(OpFamily::Activation));
}

TEST(Reduce, RefusalsAndErrors) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).input("axes", {1}, onnx::TensorProto::INT64).output("y");
  m.node("ReduceSum", {"x", "axes"}, {"y"}, "runtime_axes");
  EXPECT_THAT(convert_error(m), HasSubstr("'runtime_axes' (ReduceSum): its axes input is "
                                          "computed at run time (jetplan needs it constant)"));
  ModelBuilder twice(13);
  twice.input("x", {2, 3}).output("y");
  attr(twice.node("ReduceMax", {"x"}, {"y"}, "twice"), "axes", std::vector<int64_t>{1, -1});
  EXPECT_THAT(convert_error(twice), HasSubstr("'twice' (ReduceMax): axes [1,-1] name a dim twice"));
}

TEST(ArgReduce, KeepdimsAndSelectLastIndex) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("first", onnx::TensorProto::INT64);
  m.output("last", onnx::TensorProto::INT64);
  auto& a = m.node("ArgMax", {"x"}, {"first"}, "argmax");
  attr(a, "axis", int64_t{1});
  attr(a, "keepdims", int64_t{0});
  auto& b = m.node("ArgMin", {"x"}, {"last"}, "argmin");
  attr(b, "select_last_index", int64_t{1});
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan),
              ElementsAre(OpFamily::ArgReduce, OpFamily::Copy, OpFamily::ArgReduce));
  EXPECT_EQ(plan->tensors()->Get(plan->outputs()->Get(0)->tensor())->dtype(), fb::DType::Int64);
  const std::vector<Output> out = run_plan(bytes, {{1, 5, 5, 2, 2, 0}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].as<int64_t>(), ElementsAre(1, 0));
  EXPECT_EQ(out[0].dims, (Shape{2}));
  EXPECT_THAT(out[1].as<int64_t>(), ElementsAre(0, 1, 1));
  EXPECT_EQ(out[1].dims, (Shape{1, 3}));
}
}  // namespace
}  // namespace jetplan::converter::testing
