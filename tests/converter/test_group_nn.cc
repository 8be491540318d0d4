// The nn op families end to end in process: ONNX (built with the protobuf API, or as converter IR
// for ops of opsets that libonnx 1.12 cannot import) -> jetplan-convert's library -> plan ->
// libjetplan (load, run). Each test states what the converter writes (params, extra steps,
// refusals with their reasons) and what the runtime computes. This file: ConvTranspose, Resize,
// Reduce and ArgMax/ArgMin, TopK; test_group_nn_norms.cc the normalizations, NMS and pool
// ceil_mode; test_group_nn_prepare.cc corrupt plans that load refuses, naming the step.
#include "tests/converter/group_nn_util.h"

namespace jetplan::converter::testing {
namespace {

// ------------------------------------------------------------------------ ConvTranspose

// y[n, oc, o] = bias[oc] + sum x[n, ic, i] * w[ic, oc % (OC / g), k], o = i * s - pb + k * d (2-D).
std::vector<float> conv_transpose_ref(const std::vector<float>& x, const Shape& xs,
                                      const std::vector<float>& w, const Shape& ws,
                                      const std::vector<float>& bias, int64_t groups,
                                      const Shape& stride, const Shape& pad_begin,
                                      const Shape& ys) {
  std::vector<double> y(static_cast<size_t>(shape_count(ys)), 0.0);
  const int64_t in_per_group = xs[1] / groups, out_per_group = ws[1];
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t ic = 0; ic < xs[1]; ++ic)
      for (int64_t i0 = 0; i0 < xs[2]; ++i0)
        for (int64_t i1 = 0; i1 < xs[3]; ++i1)
          for (int64_t m = 0; m < out_per_group; ++m)
            for (int64_t k0 = 0; k0 < ws[2]; ++k0)
              for (int64_t k1 = 0; k1 < ws[3]; ++k1) {
                const int64_t o0 = i0 * stride[0] - pad_begin[0] + k0;
                const int64_t o1 = i1 * stride[1] - pad_begin[1] + k1;
                if (o0 < 0 || o0 >= ys[2] || o1 < 0 || o1 >= ys[3]) continue;
                const int64_t oc = (ic / in_per_group) * out_per_group + m;
                y[((n * ys[1] + oc) * ys[2] + o0) * ys[3] + o1] +=
                    x[((n * xs[1] + ic) * xs[2] + i0) * xs[3] + i1] *
                    w[((ic * ws[1] + m) * ws[2] + k0) * ws[3] + k1];
              }
  std::vector<float> out(y.size());
  const int64_t plane = ys[2] * ys[3];
  for (size_t i = 0; i < y.size(); ++i)
    out[i] = static_cast<float>(y[i] + (bias.empty() ? 0.0 : bias[(i / plane) % ys[1]]));
  return out;
}

TEST(ConvTranspose, PadsFromOutputShapeAndAutoPad) {
  struct Case {
    const char* auto_pad;
    std::vector<int64_t> output_shape;
    Shape out, pad_begin, pad_end;
  };
  // x 3x3, kernel 3, strides 2x3: the full transposed convolution is 7x9.
  for (const Case& c : {Case{"SAME_UPPER", {}, {6, 9}, {0, 0}, {1, 0}},
                        Case{"SAME_LOWER", {}, {6, 9}, {1, 0}, {0, 0}},
                        Case{"NOTSET", {8, 9}, {8, 9}, {0, 0}, {-1, 0}},
                        Case{"NOTSET", {5, 7}, {5, 7}, {1, 1}, {1, 1}},
                        Case{"VALID", {}, {7, 9}, {0, 0}, {0, 0}}}) {
    SCOPED_TRACE(c.auto_pad);
    ModelBuilder m(11);
    m.input("x", {1, 2, 3, 3}).output("y");
    m.random("w", {2, 3, 3, 3});
    auto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
    attr(n, "strides", std::vector<int64_t>{2, 3});
    attr(n, "auto_pad", std::string(c.auto_pad));
    if (!c.output_shape.empty()) attr(n, "output_shape", c.output_shape);
    const std::vector<uint8_t> bytes = convert_nn(m);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::ConvTranspose);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_ConvTransposeParams();
    EXPECT_EQ(vec(p->pad_begin()), c.pad_begin);
    EXPECT_EQ(vec(p->pad_end()), c.pad_end);
    EXPECT_FALSE(p->has_bias());
    EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()),
              (Shape{1, 3, c.out[0], c.out[1]}));
  }
}

TEST(ConvTranspose, GroupsBiasPadsAndOutputPaddingComputeTheAdjoint) {
  ModelBuilder m(13);
  m.input("x", {2, 4, 3, 4}).output("y");
  m.random("w", {4, 3, 3, 2}).random("b", {6});
  auto& n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"}, "up");
  attr(n, "group", int64_t{2});
  attr(n, "strides", std::vector<int64_t>{2, 3});
  attr(n, "pads", std::vector<int64_t>{1, 0, 0, 2});
  attr(n, "output_padding", std::vector<int64_t>{1, 2});
  const std::vector<uint8_t> bytes = convert_nn(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  // H: 2 * 2 + 1 + 3 - 1 = 7; W: 3 * 3 + 2 + 2 - 2 = 11.
  const Shape ys = tensor_shape(plan, plan->outputs()->Get(0)->tensor());
  ASSERT_EQ(ys, (Shape{2, 6, 7, 11}));
  const auto* p = first_step(plan, OpFamily::ConvTranspose)->params_as_ConvTransposeParams();
  EXPECT_TRUE(p->has_bias());
  EXPECT_EQ(p->groups(), 2);
  EXPECT_EQ(vec(p->output_padding()), (Shape{1, 2}));
  const std::vector<float> x = ramp(2 * 4 * 3 * 4);
  const std::vector<float> w =
      weight_values(plan, first_step(plan, OpFamily::ConvTranspose)->inputs()->Get(1));
  const std::vector<float> b =
      weight_values(plan, first_step(plan, OpFamily::ConvTranspose)->inputs()->Get(2));
  const std::vector<Output> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0].as<float>(),
              conv_transpose_ref(x, {2, 4, 3, 4}, w, {4, 3, 3, 2}, b, 2, {2, 3}, {1, 0}, ys),
              1e-5f);
}

TEST(ConvTranspose, OneAndThreeSpatialDims) {
  ModelBuilder m(13);
  m.input("x1", {1, 2, 5}).input("x3", {1, 1, 2, 3, 2}).output("y1").output("y3");
  m.random("w1", {2, 1, 3}).random("w3", {1, 2, 2, 2, 2});
  attr(m.node("ConvTranspose", {"x1", "w1"}, {"y1"}, "t1"), "strides", std::vector<int64_t>{2});
  attr(m.node("ConvTranspose", {"x3", "w3"}, {"y3"}, "t3"), "dilations",
       std::vector<int64_t>{1, 2, 1});
  const std::vector<uint8_t> bytes = convert_nn(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{1, 1, 11}));
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(1)->tensor()), (Shape{1, 2, 3, 5, 3}));
}

TEST(ConvTranspose, BadAttributesNameTheNode) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 3, 3}).output("y");
  m.random("w", {2, 3, 3, 3});
  auto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "bad_up");
  attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
  EXPECT_THAT(convert_error(m), HasSubstr("'bad_up' (ConvTranspose): kernel_shape [2,2] differs"));
}

// ---------------------------------------------------------------------- Resize, Upsample

TEST(Resize, ScalesGiveFloorSizesAndTheirResizedLength) {
  ModelBuilder m(13);
  m.input("x", {1, 1, 4, 5}).output("y");
  m.initializer("scales", {4}, {1.f, 1.f, 0.6f, 2.5f});
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
  attr(n, "mode", std::string("linear"));
  attr(n, "coordinate_transformation_mode", std::string("align_corners"));
  const std::vector<uint8_t> bytes = convert_nn(m);
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
  const std::vector<uint8_t> bytes = convert_nn(m);
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
    const std::vector<uint8_t> bytes = convert_nn(m);
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

// --------------------------------------------------------------------- Reduce, ArgMax/Min

TEST(Reduce, KeepdimsZeroIsAStepAndACopyView) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("y");
  auto& n = m.node("ReduceMean", {"x"}, {"y"}, "mean");
  attr(n, "axes", std::vector<int64_t>{-1, 0});
  attr(n, "keepdims", int64_t{0});
  const std::vector<uint8_t> bytes = convert_nn(m);
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
    const std::vector<uint8_t> bytes = convert_nn(m);
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
  const std::vector<Output> out = run_plan(convert_nn(m), {x});
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
  const std::vector<uint8_t> bytes = convert_nn(m);
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
  const std::vector<uint8_t> bytes = convert_nn(m);
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

// ----------------------------------------------------------------------------------- TopK

TEST(TopK, ConstantKValuesIndicesAndWorkspace) {
  ModelBuilder m(11);
  m.input("x", {2, 5}).output("v").output("i", onnx::TensorProto::INT64);
  m.initializer_i64("k", {1}, {3});
  auto& n = m.node("TopK", {"x", "k"}, {"v", "i"}, "top");
  attr(n, "largest", int64_t{0});
  const std::vector<uint8_t> bytes = convert_nn(m);
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
  const std::vector<uint8_t> bytes = convert_nn(zero);
  ASSERT_NE(plan_of(bytes), nullptr);
  EXPECT_EQ(plan_of(bytes)->steps()->size(), 0u);
  const std::vector<Output> out = run_plan(bytes, {std::vector<float>(10, 1.f)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].bytes.empty());
  EXPECT_EQ(out[1].dims, (Shape{2, 0}));
}

}  // namespace
}  // namespace jetplan::converter::testing
