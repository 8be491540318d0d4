// NonMaxSuppression end to end in process: the run-time count on the graph output, and refusals.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

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
  const std::vector<uint8_t> bytes = converted_plan(nms_model());
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
  const std::vector<Output> got = run_plan(converted_plan(m), {boxes, scores});
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
}  // namespace
}  // namespace jetplan::converter::testing
