// Empty tensors (an extent of 0): plan tensors of 0 bytes. The converter drops the steps whose
// outputs are all empty and Concat's empty inputs; graph inputs and outputs may be empty and
// the runtime binds them with 0 bytes; a step that would compute something from an empty
// tensor is refused by name.
#include <gmock/gmock.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

const fb::Tensor* tensor_named(const fb::Plan* plan, const std::string& name) {
  for (const auto* t : *plan->tensors())
    if (t->name()->str() == name) return t;
  return nullptr;
}

TEST(EmptyTensors, AFoldedEmptyConstantIsAnEmptyOutput) {
  // ConstantOfShape of [0] folds to an empty constant; the output Copy has nothing to move.
  ModelBuilder m(13);
  m.input("x", {2}).output("y").output("z");
  m.initializer_i64("shape", {1}, {0});
  m.node("ConstantOfShape", {"shape"}, {"y"}, "empty");
  m.node("Relu", {"x"}, {"z"}, "relu");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const fb::Tensor* y = tensor_named(c.fb, "y:output0");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->size_bytes(), 0u);
  EXPECT_THAT(std::vector<int64_t>(y->shape()->begin(), y->shape()->end()), ElementsAre(0));
  EXPECT_EQ(c.fb->steps()->size(), 1u);  // the Relu; no Copy of the empty constant
  const auto out = run(c.plan, {bytes_of(std::vector<float>{-1.f, 2.f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].empty());
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(0.f, 2.f));
}

TEST(EmptyTensors, EmptyInputsAndOutputsRunAndStepsOnThemAreDropped) {
  // x [0, 3] is empty: its Reshape (allowzero) and Transpose write empty tensors and go; the
  // Slice of w past its end is empty too; Concat drops its empty input and copies w's rows.
  ModelBuilder m(14);
  m.input("x", {0, 3}).input("w", {2, 3}).output("r").output("t").output("s").output("cat");
  m.initializer_i64("shape", {3}, {3, 0, 1});
  attr(m.node("Reshape", {"x", "shape"}, {"r"}, "reshape"), "allowzero", int64_t{1});
  attr(m.node("Transpose", {"x"}, {"t"}, "transpose"), "perm", std::vector<int64_t>{1, 0});
  m.initializer_i64("starts", {1}, {5}).initializer_i64("ends", {1}, {9});
  m.initializer_i64("axes", {1}, {1});
  m.node("Slice", {"w", "starts", "ends", "axes"}, {"s"}, "slice_past_end");
  attr(m.node("Concat", {"x", "w"}, {"cat"}, "concat"), "axis", int64_t{0});
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  ASSERT_EQ(c.fb->steps()->size(), 1u);  // the Concat, of w alone
  EXPECT_EQ(c.fb->steps()->Get(0)->inputs()->size(), 1u);
  for (const char* name : {"x", "r", "t", "s"}) {
    const fb::Tensor* t = tensor_named(c.fb, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->size_bytes(), 0u) << name;
  }
  const std::vector<float> w = {1, 2, 3, 4, 5, 6};
  const auto out = run(c.plan, {{}, bytes_of(w)});
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(out[size_t(i)].empty()) << i;
  EXPECT_EQ(values_of<float>(out[3]), w);
}

TEST(EmptyTensors, SplitIntoEmptyParts) {
  ModelBuilder m(13);
  m.input("x", {4}).output("a").output("b").output("c");
  m.initializer_i64("split", {3}, {0, 4, 0});
  m.node("Split", {"x", "split"}, {"a", "b", "c"}, "split");
  const Converted c = convert(m);
  ASSERT_NE(c.fb, nullptr);
  const auto out = run(c.plan, {bytes_of(std::vector<float>{1, 2, 3, 4})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].empty());
  EXPECT_THAT(values_of<float>(out[1]), ElementsAre(1, 2, 3, 4));
  EXPECT_TRUE(out[2].empty());
}

TEST(EmptyTensors, ComputingFromAnEmptyTensorIsRefusedByName) {
  // ReduceSum over an empty axis would give zeros: a step that reads an empty tensor must write
  // only empty ones.
  ModelBuilder m(13);
  m.input("x", {2, 0}).output("y");
  m.node("ReduceSum", {"x"}, {"y"}, "sum_of_nothing");
  EXPECT_THAT(convert_error(m),
              AllOf(HasSubstr("'sum_of_nothing' (ReduceSum)"),
                    HasSubstr("input 'x' is empty ([2,0]) but output 'y' is not")));
}

// GPU plans hold them too: the Relu of an empty input is dropped, the float32 output's Cast
// writes nothing (a step the runtime skips, with no kernel), and the plan loads without a device
// beside a Relu that runs.
TEST(EmptyTensors, GpuPlansHoldThemAndLoad) {
  ModelBuilder m(13);
  m.input("x", {0, 3}).input("w", {2, 3}).output("y").output("v");
  m.node("Relu", {"x"}, {"y"}, "relu_empty");
  m.node("Relu", {"w"}, {"v"}, "relu");
  ConvertOptions gpu;
  gpu.target = "h100";
  const ConvertResult r = convert_onnx(m.bytes(), "model.onnx", gpu);
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE,
                                &plan),
            JP_OK)
      << jp_last_error();
  jp_tensor_desc d{};
  ASSERT_EQ(jp_plan_output_desc(plan, 0, &d), JP_OK);
  EXPECT_EQ(d.bytes, 0u);
  bool relu = false;
  for (int32_t i = 0; i < jp_plan_num_steps(plan); ++i) {
    jp_step_desc s{};
    ASSERT_EQ(jp_plan_step_desc(plan, i, &s), JP_OK);
    relu = relu || std::string(s.name) == "relu";
  }
  EXPECT_TRUE(relu);
  jp_plan_destroy(plan);
}

}  // namespace
}  // namespace jetplan::converter::testing
