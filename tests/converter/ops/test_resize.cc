// Resize and Upsample end to end in process (ONNX built with the protobuf API -> converter ->
// plan -> libjetplan): the params the converter writes, refusals with their reasons, and what the
// runtime computes.
#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// ---------------------------------------------------------------------- Resize, Upsample

TEST(Resize, ScalesGiveFloorSizesAndTheirResizedLength) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 5}).output("y");
  m.initializer("scales", {4}, {1.f, 1.f, 0.6f, 2.5f});
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
  attr(n, "mode", std::string("linear"));
  attr(n, "coordinate_transformation_mode", std::string("align_corners"));
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{1, 1, 2, 12}));
  const fb::Step* s = first_step(plan, OpFamily::Resize);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->inputs()->size(), 1u);  // the scales live in the params
  const auto* p = s->params_as_ResizeParams();
  EXPECT_EQ(p->mode(), fb::ResizeMode::Linear);
  EXPECT_EQ(p->coord(), fb::ResizeCoord::AlignCorners);
  EXPECT_DOUBLE_EQ(p->scale()->Get(2), static_cast<double>(0.6f));  // the float, widened
  EXPECT_DOUBLE_EQ(p->resized_length()->Get(2), 4.0 * static_cast<double>(0.6f));
  EXPECT_DOUBLE_EQ(p->resized_length()->Get(3), 12.5);
  // align_corners over H: 4 rows -> 2 at x * 3 / 1.4: rows 0 and 2.142857 of a ramp by 5s.
  std::vector<float> x(20);
  std::iota(x.begin(), x.end(), 0.f);
  const std::vector<float> y = run_plan(bytes, {x})[0].as<float>();
  ASSERT_EQ(y.size(), 24u);
  EXPECT_FLOAT_EQ(y[0], 0.f);
  EXPECT_NEAR(y[12], 5.0 * 3.0 / 1.4, 1e-5);
}

TEST(Resize, SizesAndTfCropAndResize) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 4}).output("y");
  m.initializer("roi", {8}, {0, 0, 0.25f, 0.5f, 1, 1, 0.75f, 1.5f});
  m.initializer_i64("sizes", {4}, {1, 1, 3, 3});
  auto& n = m.node("Resize", {"x", "roi", "", "sizes"}, {"y"}, "crop");
  attr(n, "mode", std::string("linear"));
  attr(n, "coordinate_transformation_mode", std::string("tf_crop_and_resize"));
  attr(n, "extrapolation_value", -7.f);
  const std::vector<uint8_t> bytes = converted_plan(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  const auto* p = first_step(plan, OpFamily::Resize)->params_as_ResizeParams();
  EXPECT_DOUBLE_EQ(p->scale()->Get(2), 0.75);
  EXPECT_DOUBLE_EQ(p->resized_length()->Get(3), 3.0);
  EXPECT_DOUBLE_EQ(p->roi_start()->Get(3), 0.5);
  EXPECT_DOUBLE_EQ(p->roi_end()->Get(3), 1.5);
  EXPECT_FLOAT_EQ(p->extrapolation_value(), -7.f);
  std::vector<float> x(16);
  std::iota(x.begin(), x.end(), 0.f);
  const std::vector<float> y = run_plan(bytes, {x})[0].as<float>();
  // Rows at 0.75, 1.5, 2.25; columns at 1.5, 3, 4.5 (the last outside: extrapolated).
  ASSERT_EQ(y.size(), 9u);
  EXPECT_NEAR(y[0], 0.75f * 4 + 1.5f, 1e-5);
  EXPECT_NEAR(y[4], 1.5f * 4 + 3.f, 1e-5);
  EXPECT_FLOAT_EQ(y[2], -7.f);
}

TEST(Resize, UpsampleIsNearestAsymmetricFloor) {
  for (int opset : {7, 9}) {
    SCOPED_TRACE(opset);
    ModelBuilder m(opset);
    m.input("x", {1, 1, 2, 2}).output("y");
    onnx::NodeProto* n = nullptr;
    if (opset == 7) {
      n = &m.node("Upsample", {"x"}, {"y"}, "up");
      auto* a = add_attr(*n, "scales");
      a->set_type(onnx::AttributeProto::FLOATS);
      for (float s : {1.f, 1.f, 2.f, 3.f}) a->add_floats(s);
    } else {
      m.initializer("scales", {4}, {1.f, 1.f, 2.f, 3.f});
      n = &m.node("Upsample", {"x", "scales"}, {"y"}, "up");
    }
    const std::vector<uint8_t> bytes = converted_plan(m);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const auto* p = first_step(plan, OpFamily::Resize)->params_as_ResizeParams();
    EXPECT_EQ(p->coord(), fb::ResizeCoord::Asymmetric);
    EXPECT_EQ(p->nearest(), fb::ResizeNearest::Floor);
    const std::vector<float> y = run_plan(bytes, {{1, 2, 3, 4}})[0].as<float>();
    EXPECT_THAT(
        y, ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4));
  }
}

TEST(Resize, RefusalsGiveTheirReasons) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 4}).input("s", {4}).output("y1").output("y2");
  m.initializer("mixed", {4}, {1, 1, 2, 0.5f});
  m.node("Resize", {"x", "", "s"}, {"y1"}, "runtime_scales");
  auto& n = m.node("Resize", {"x", "", "mixed"}, {"y2"}, "legacy_mode");
  attr(n, "coordinate_transformation_mode", std::string("tf_half_pixel_for_nn"));
  const std::string e = convert_error(m);
  EXPECT_THAT(e, HasSubstr("'runtime_scales' (Resize): its scales input is computed at run time"));
  EXPECT_THAT(e, HasSubstr("'legacy_mode' (Resize): coordinate_transformation_mode "
                           "'tf_half_pixel_for_nn' is not supported"));

  ModelBuilder m10(10);  // opset 10 nearest rounds up when shrinking, down when growing
  m10.input("x", {1, 1, 4, 4}).output("y");
  m10.initializer("mixed", {4}, {1, 1, 2, 0.5f});
  m10.node("Resize", {"x", "mixed"}, {"y"}, "resize10");
  EXPECT_THAT(convert_error(m10), HasSubstr("'resize10' (Resize): nearest mode that enlarges some "
                                            "dims and shrinks others"));
}

TEST(Resize, Opset18OptionsOnlyAtTheirDefaults) {
  struct Case {
    std::function<void(Node&)> set;
    const char* reason;  // "" : converts
  };
  const Case cases[] = {
      {[](Node& n) { set_attr(n, "antialias", int64_t{1}); }, "antialias=1 is not supported"},
      {[](Node& n) { set_attr(n, "keep_aspect_ratio_policy", std::string("not_larger")); },
       "keep_aspect_ratio_policy 'not_larger' is not supported"},
      {[](Node& n) {
         n.attrs["axes"].kind = Attribute::Kind::kInts;
         n.attrs["axes"].ints = {2, 3};
       },
       "an axes attribute that leaves dims out is not supported"},
      {[](Node& n) {
         n.attrs["axes"].kind = Attribute::Kind::kInts;
         n.attrs["axes"].ints = {0, 1, -2, -1};
       },
       ""},
      {[](Node& n) { set_attr(n, "antialias", int64_t{0}); }, ""},
  };
  for (const Case& c : cases) {
    IrModel ir(18);
    const int x = ir.input("x", {1, 1, 2, 2});
    const int scales = ir.constant("scales", {4}, {1, 1, 2, 2});
    Node& n = ir.node("Resize", {x, -1, scales}, "y");
    c.set(n);
    ir.output(n.outputs[0]);
    if (*c.reason) {
      EXPECT_THAT(ir_error(ir.g), HasSubstr(cat("'Resize_node' (Resize): ", c.reason)));
    } else {
      const std::vector<uint8_t> bytes = plan_from_ir(ir.g);
      EXPECT_EQ(run_plan(bytes, {{1, 2, 3, 4}})[0].as<float>().size(), 16u);
    }
  }
}
}  // namespace
}  // namespace jetplan::converter::testing
