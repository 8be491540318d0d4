// TopK end to end in process: constant K, values, indices and workspace, refusals and K = 0.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// ----------------------------------------------------------------------------------- TopK

TEST(TopK, ConstantKValuesIndicesAndWorkspace) {
  ModelBuilder m(11);
  m.input("x", {2, 5}).output("v").output("i", onnx::TensorProto::INT64);
  m.initializer_i64("k", {1}, {3});
  auto& n = m.node("TopK", {"x", "k"}, {"v", "i"}, "top");
  attr(n, "largest", int64_t{0});
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = first_step(plan, OpFamily::TopK);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->outputs()->size(), 2u);
  EXPECT_EQ(s->workspace_bytes(), 5u * sizeof(int64_t));
  EXPECT_EQ(s->workspace_offset() % 256, 0u);
  EXPECT_FALSE(s->params_as_TopKParams()->largest());
  const std::vector<Output> out = run_plan(bytes, {{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(out[0].as<float>(), ElementsAre(1, 1, 3, 2, 3, 5));
  EXPECT_THAT(out[1].as<int64_t>(), ElementsAre(1, 3, 0, 1, 4, 3));
}

TEST(TopK, RefusalsErrorsAndKZero) {
  ModelBuilder m(11);
  m.input("x", {2, 5}).input("k", {1}, onnx::TensorProto::INT64).output("v");
  m.output("i", onnx::TensorProto::INT64);
  m.node("TopK", {"x", "k"}, {"v", "i"}, "runtime_k");
  EXPECT_THAT(convert_error(m), HasSubstr("'runtime_k' (TopK): its K input is computed at run "
                                          "time"));
  ModelBuilder zero(11);
  zero.input("x", {2, 5}).output("v").output("i", onnx::TensorProto::INT64);
  zero.initializer_i64("k", {1}, {0});
  zero.node("TopK", {"x", "k"}, {"v", "i"}, "none");
  // k = 0: both outputs are empty, so the step is dropped and the plan writes nothing.
  const std::vector<uint8_t> bytes = converted_plan(zero);
  ASSERT_NE(plan_of(bytes), nullptr);
  EXPECT_EQ(plan_of(bytes)->steps()->size(), 0u);
  const std::vector<Output> out = run_plan(bytes, {std::vector<float>(10, 1.f)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].bytes.empty());
  EXPECT_EQ(out[1].dims, (Shape{2, 0}));
}
}  // namespace
}  // namespace jetplan::converter::testing
