// The nn op families end to end in process: ONNX (built with the protobuf API, or as converter IR
// for ops of opsets that libonnx 1.12 cannot import) -> jetplan-convert's library -> plan ->
// libjetplan (load, run). Each test states what the converter writes (params, extra steps,
// refusals with their reasons) and what the runtime computes; the Prepare* tests corrupt plans
// and expect load to refuse them, naming the step.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <numeric>
#include <tuple>
#include <utility>

#include "converter/src/lower.h"
#include "converter/src/passes.h"
#include "converter/src/serialize.h"
#include "converter/src/support.h"
#include "tests/converter/test_util.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ------------------------------------------------------------------------------- helpers

const fb::Plan* plan_of(const std::vector<uint8_t>& plan) {
  const fb::Plan* p = read_plan(plan);
  EXPECT_NE(p, nullptr);
  return p;
}

// Converts; the runtime's loader (the contract's enforcer) must accept the plan, and so must
// the contract's independent reading (plan_contract.h).
std::vector<uint8_t> convert_nn(const ModelBuilder& m, const ConvertOptions& options = {}) {
  try {
    std::vector<uint8_t> plan = convert_onnx(m.bytes(), "model.onnx", options).plan;
    for (const std::string& problem : plan_contract_problems(plan))
      ADD_FAILURE() << "contract: " << problem;
    jp_plan* p = nullptr;
    EXPECT_EQ(jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p), JP_OK)
        << jp_last_error();
    jp_plan_destroy(p);
    return plan;
  } catch (const ConvertError& e) {
    ADD_FAILURE() << "conversion failed: " << e.what();
    return {};
  }
}

const fb::Step* first_step(const fb::Plan* plan, OpFamily op) {
  for (const auto* s : *plan->steps())
    if (s->op() == op) return s;
  ADD_FAILURE() << "no " << fb::EnumNameOpFamily(op) << " step";
  return nullptr;
}

Shape vec(const flatbuffers::Vector<int64_t>* v) {
  return v ? Shape(v->begin(), v->end()) : Shape();
}

struct Output {
  std::vector<uint8_t> bytes;
  Shape dims;
  template <typename T>
  std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

// Loads and runs a plan on float inputs (in binding order); the outputs as the last run left
// them (run-time extents applied).
std::vector<Output> run_plan(const std::vector<uint8_t>& bytes,
                             const std::vector<std::vector<float>>& inputs) {
  std::vector<Output> outs;
  jp_plan* plan = nullptr;
  if (jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan) != JP_OK) {
    ADD_FAILURE() << "load: " << jp_last_error();
    return outs;
  }
  jp_context* ctx = nullptr;
  EXPECT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  EXPECT_EQ(static_cast<size_t>(jp_plan_num_inputs(plan)), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(jp_context_set_input(ctx, static_cast<int32_t>(i), inputs[i].data(),
                                   inputs[i].size() * sizeof(float)),
              JP_OK)
        << jp_last_error();
  EXPECT_EQ(jp_context_run(ctx), JP_OK);
  for (int32_t o = 0; o < jp_plan_num_outputs(plan); ++o) {
    const void* data = nullptr;
    size_t size = 0;
    jp_tensor_desc desc;
    EXPECT_EQ(jp_context_get_output(ctx, o, &data, &size), JP_OK);
    EXPECT_EQ(jp_context_output_desc(ctx, o, &desc), JP_OK);
    Output out;
    out.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
    out.dims.assign(desc.dims, desc.dims + desc.rank);
    outs.push_back(std::move(out));
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return outs;
}

// The status and message of loading a plan that must not load.
std::pair<jp_status, std::string> load_error(const std::vector<uint8_t>& bytes) {
  jp_plan* plan = nullptr;
  const jp_status s = jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan);
  std::string message = s == JP_OK ? "" : jp_last_error();
  jp_plan_destroy(plan);
  return {s, message};
}

std::vector<float> ramp(size_t n, float scale = 0.25f, float offset = -1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 23);
  return v;
}

// ------------------------------------------------------------------ converter IR models
// For ops libonnx 1.12 cannot import (GroupNormalization, opset 18 Resize attributes), the model
// is built as the importer's output and run through the rest of the pipeline.

struct IrModel {
  Graph g;
  explicit IrModel(int opset) { g.opset = opset; }

  int value(const std::string& name, DataType dtype = DataType::kUndefined) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    return g.add_value(std::move(v));
  }
  int input(const std::string& name, const Shape& shape) {
    const int id = value(name, DataType::kFloat32);
    g.values[id].shape = shape;
    g.values[id].shape_known = true;
    g.values[id].graph_input = static_cast<int>(g.inputs.size());
    g.inputs.push_back(id);
    return id;
  }
  int constant(const std::string& name, const Shape& shape, const std::vector<float>& v) {
    const int id = value(name, DataType::kFloat32);
    Value& c = g.values[id];
    c.shape = shape;
    c.shape_known = c.is_constant = true;
    c.data = write_doubles(DataType::kFloat32, std::vector<double>(v.begin(), v.end()));
    return id;
  }
  Node& node(const std::string& op, const std::vector<int>& inputs, const std::string& out) {
    Node n;
    n.name = op + "_node";
    n.op_type = op;
    n.inputs = inputs;
    n.outputs = {value(out)};
    g.values[n.outputs[0]].producer = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  void output(int id) {
    g.values[id].graph_output = true;
    g.outputs.push_back(id);
  }
};

void set_attr(Node& n, const std::string& name, int64_t v) {
  n.attrs[name].kind = Attribute::Kind::kInt;
  n.attrs[name].i = v;
}
void set_attr(Node& n, const std::string& name, const std::string& v) {
  n.attrs[name].kind = Attribute::Kind::kString;
  n.attrs[name].s = v;
}

// convert_onnx after the import.
std::vector<uint8_t> plan_from_ir(Graph g) {
  eliminate_dead_nodes(g);
  check_support(g);
  remove_identities(g);
  fold_batchnorm(g);
  fuse(g);
  legalize(g);
  PlanDraft draft = lower(g);
  assign_memory(&draft);
  return serialize_plan(draft, TargetDesc{}, PlanMetadata{});
}

std::string ir_error(Graph g) {
  try {
    plan_from_ir(std::move(g));
  } catch (const ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "conversion succeeded, an error was expected";
  return "";
}

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

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
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

TEST(TopK, RefusalsAndErrors) {
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
  EXPECT_THAT(convert_error(zero), HasSubstr("'none' (TopK): k = 0 gives empty outputs"));
}

// ------------------------------------------------------------------------- normalizations

TEST(Norms, InstanceNormAndLrnRun) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 4}).output("in").output("lrn");
  m.initializer("s", {2}, {2.f, 0.5f}).initializer("b", {2}, {1.f, -1.f});
  attr(m.node("InstanceNormalization", {"x", "s", "b"}, {"in"}, "inorm"), "epsilon", 0.f);
  auto& l = m.node("LRN", {"x"}, {"lrn"}, "lrn");
  attr(l, "size", int64_t{3});
  attr(l, "alpha", 0.5f);
  const std::vector<uint8_t> bytes = convert_nn(m);
  const fb::Plan* plan = plan_of(bytes);
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(first_step(plan, OpFamily::Lrn)->params_as_LrnParams()->size(), 3);
  const std::vector<float> x = {1, 2, 3, 4, 0, 0, 2, 2};
  const std::vector<Output> out = run_plan(bytes, {x});
  ASSERT_EQ(out.size(), 2u);
  // Channel 0: mean 2.5, var 1.25; channel 1: mean 1, var 1.
  const float r = 1.f / std::sqrt(1.25f);
  expect_near(out[0].as<float>(),
              {2 * -1.5f * r + 1, 2 * -0.5f * r + 1, 2 * 0.5f * r + 1, 2 * 1.5f * r + 1, -1.5f,
               -1.5f, -0.5f, -0.5f},
              1e-5f);
  // LRN, size 3 over 2 channels: every element sees both channels' squares.
  std::vector<float> want(8);
  for (int s = 0; s < 4; ++s)
    for (int c = 0; c < 2; ++c) {
      const double sq = x[s] * x[s] + x[4 + s] * x[4 + s];
      want[c * 4 + s] = static_cast<float>(x[c * 4 + s] / std::pow(1 + 0.5 / 3 * sq, 0.75));
    }
  expect_near(out[1].as<float>(), want, 1e-5f);
}

TEST(Norms, LayerNormBroadcastScaleAndStatisticOutputs) {
  // Which of Mean and InvStdDev the graph reads decides the step's outputs.
  for (int stats = 0; stats < 4; ++stats) {
    SCOPED_TRACE(stats);
    const bool mean = stats & 1, inv = stats & 2;
    ModelBuilder m(17);
    m.input("x", {2, 2, 3}).output("y");
    m.initializer("scale", {3}, {1.f, 2.f, 3.f}).initializer("bias", {1}, {0.5f});
    if (mean) m.output("mean");
    if (inv) m.output("inv");
    auto& n = m.node("LayerNormalization", {"x", "scale", "bias"},
                     {"y", mean ? "mean" : "unused_mean", inv ? "inv" : ""}, "ln");
    attr(n, "axis", int64_t{1});
    attr(n, "epsilon", 0.f);
    const std::vector<uint8_t> bytes = convert_nn(m);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const fb::Step* s = first_step(plan, OpFamily::LayerNorm);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_LayerNormParams();
    EXPECT_EQ(p->has_mean(), mean);
    EXPECT_EQ(p->has_inv_std_dev(), inv);
    EXPECT_EQ(s->outputs()->size(), 1u + mean + inv);
    // The [3] scale and [1] bias are expanded to the normalized shape [2, 3].
    EXPECT_EQ(tensor_shape(plan, s->inputs()->Get(1)), (Shape{2, 3}));
    EXPECT_EQ(weight_values(plan, s->inputs()->Get(2)), std::vector<float>(6, 0.5f));
    const std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, -1, -1, 1, 1, 1};
    const std::vector<Output> out = run_plan(bytes, {x});
    ASSERT_EQ(out.size(), 1u + mean + inv);
    const float r0 = 1.f / std::sqrt(35.f / 12.f);  // row 0: 1..6, mean 3.5
    const std::vector<float> y = out[0].as<float>();
    EXPECT_NEAR(y[0], -2.5f * r0 * 1 + 0.5f, 1e-5);
    EXPECT_NEAR(y[5], 2.5f * r0 * 3 + 0.5f, 1e-5);
    EXPECT_NEAR(y[6], -1 * 1 + 0.5f, 1e-5);  // row 1: -1 x3, 1 x3: std 1
    if (mean) {
      EXPECT_EQ(out[1].dims, (Shape{2, 1, 1}));
      EXPECT_THAT(out[1].as<float>(), ElementsAre(3.5f, 0.f));
    }
    if (inv) {
      EXPECT_EQ(out.back().dims, (Shape{2, 1, 1}));
      const std::vector<float> iv = out.back().as<float>();
      EXPECT_NEAR(iv[0], r0, 1e-6);
      EXPECT_NEAR(iv[1], 1.f, 1e-6);
    }
  }
}

TEST(Norms, LayerNormRefusals) {
  ModelBuilder m(17);
  m.input("x", {2, 3}).input("s", {1}).output("y").output("z");
  m.initializer("ones", {3}, {1, 1, 1});
  m.node("LayerNormalization", {"x", "s"}, {"y"}, "runtime_broadcast");
  attr(m.node("LayerNormalization", {"x", "ones"}, {"z"}, "stash"), "stash_type", int64_t{10});
  const std::string e = convert_error(m);
  EXPECT_THAT(e, HasSubstr("'runtime_broadcast' (LayerNormalization): its input 's' [1] "
                           "broadcasts to the normalized shape and is computed at run time"));
  EXPECT_THAT(e, HasSubstr("'stash' (LayerNormalization): stash_type=10"));
}

TEST(Norms, GroupNormPerGroupAtOpset18PerChannelAtOpset21) {
  for (int opset : {18, 21}) {
    SCOPED_TRACE(opset);
    IrModel ir(opset);
    const int x = ir.input("x", {1, 4, 2});
    const Shape param = {opset == 18 ? 2 : 4};
    const int scale = ir.constant(
        "scale", param, opset == 18 ? std::vector<float>{1, 2} : std::vector<float>{1, 1, 2, 2});
    const int bias = ir.constant("bias", param, std::vector<float>(param[0], 0.f));
    Node& n = ir.node("GroupNormalization", {x, scale, bias}, "y");
    set_attr(n, "num_groups", int64_t{2});
    n.attrs["epsilon"].kind = Attribute::Kind::kFloat;
    n.attrs["epsilon"].f = 0.f;
    ir.output(n.outputs[0]);
    const std::vector<uint8_t> bytes = plan_from_ir(ir.g);
    const fb::Plan* plan = plan_of(bytes);
    ASSERT_NE(plan, nullptr);
    const auto* p = first_step(plan, OpFamily::GroupNorm)->params_as_GroupNormParams();
    EXPECT_EQ(p->groups(), 2);
    EXPECT_EQ(p->affine_per_group(), opset == 18);
    // Group 0: {0, 2, 0, 2}, mean 1, std 1; group 1: {1, 1, 3, 3} mean 2, std 1, scaled by 2.
    const std::vector<float> y = run_plan(bytes, {{0, 2, 0, 2, 1, 1, 3, 3}})[0].as<float>();
    expect_near(y, {-1, 1, -1, 1, -2, -2, 2, 2}, 1e-6f);
  }
  IrModel ir(18);
  const int x = ir.input("x", {1, 6, 2});
  Node& n =
      ir.node("GroupNormalization",
              {x, ir.constant("s", {4}, {1, 1, 1, 1}), ir.constant("b", {4}, {0, 0, 0, 0})}, "y");
  set_attr(n, "num_groups", int64_t{4});
  ir.output(n.outputs[0]);
  EXPECT_THAT(ir_error(ir.g), HasSubstr("'GroupNormalization_node' (GroupNormalization): "
                                        "num_groups 4 does not divide the 6 channels"));
}

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
  const std::vector<uint8_t> bytes = convert_nn(nms_model());
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
  const std::vector<Output> got = run_plan(convert_nn(m), {boxes, scores});
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

// ------------------------------------------------------------------- prepare: corrupt plans

// Copies n bytes from src to `bytes` at `at`, a pointer into `bytes` (bounds-checked). Not
// inlined: GCC 12 traces `at` back to the table it came from and warns of an overflow there.
[[gnu::noinline]] void write_at(std::vector<uint8_t>& bytes, const void* at, const void* src, size_t n) {
  const size_t offset = reinterpret_cast<uintptr_t>(at) - reinterpret_cast<uintptr_t>(bytes.data());
  for (size_t k = 0; k < n; ++k) bytes.at(offset + k) = static_cast<const uint8_t*>(src)[k];
}

// A copy of `plan` with the dims of `tensor`'s shape permuted by swapping dims a and b (same
// bytes, so only the step's own checks can notice).
std::vector<uint8_t> swap_dims(std::vector<uint8_t> bytes, uint32_t tensor, int a, int b) {
  const auto* shape = read_plan(bytes)->tensors()->Get(tensor)->shape();
  Shape dims(shape->begin(), shape->end());
  EXPECT_NE(dims[a], dims[b]) << "the swap would change nothing";
  std::swap(dims[a], dims[b]);
  write_at(bytes, shape->data(), dims.data(), dims.size() * sizeof(int64_t));
  return bytes;
}

// Overwrites a scalar field of a table of `bytes` (it must be stored: not at its default).
template <typename T, typename Table>
void poke(std::vector<uint8_t>& bytes, const Table* table, flatbuffers::voffset_t field, T v) {
  const uint8_t* at = reinterpret_cast<const flatbuffers::Table*>(table)->GetAddressOf(field);
  ASSERT_NE(at, nullptr) << "field not stored";
  ASSERT_TRUE(at >= bytes.data() && at + sizeof(T) <= bytes.data() + bytes.size())
      << "the table is not in this buffer";
  write_at(bytes, at, &v, sizeof(T));
}

template <typename T, typename Elem>
void poke_element(std::vector<uint8_t>& bytes, const flatbuffers::Vector<Elem>* v, uint32_t i,
                  T value) {
  ASSERT_NE(v, nullptr);
  ASSERT_LT(i, v->size());
  const Elem e = static_cast<Elem>(value);
  const uint8_t* at = reinterpret_cast<const uint8_t*>(v->data() + i);
  ASSERT_TRUE(at >= bytes.data() && at + sizeof(Elem) <= bytes.data() + bytes.size())
      << "the vector is not in this buffer";
  write_at(bytes, at, &e, sizeof(Elem));
}

void expect_refused(const std::vector<uint8_t>& bytes, const std::string& step,
                    jp_status status = JP_ERROR_INVALID_PLAN) {
  const auto [s, message] = load_error(bytes);
  EXPECT_EQ(s, status) << message;
  EXPECT_THAT(message, HasSubstr("step '" + step + "'"));
}

// One model with a step of every nn family whose output has distinct dims.
ModelBuilder every_family() {
  ModelBuilder m(17);
  m.input("x", {1, 2, 3, 4}).input("boxes", {1, 5, 4}).input("scores", {1, 2, 5});
  for (const char* o : {"ct", "rs", "rd", "tv", "in", "ln", "lrn"}) m.output(o);
  m.output("am", onnx::TensorProto::INT64).output("ti", onnx::TensorProto::INT64);
  m.output("sel", onnx::TensorProto::INT64);
  m.random("w", {2, 3, 2, 2}).random("s", {2}).random("b", {2}).random("ls", {4});
  m.initializer("scales", {4}, {1, 1, 2, 1.5f});
  m.initializer_i64("k", {1}, {2}).initializer_i64("max", {1}, {2});
  m.node("ConvTranspose", {"x", "w"}, {"ct"}, "ct");
  m.node("Resize", {"x", "", "scales"}, {"rs"}, "rs");
  attr(m.node("ReduceMax", {"x"}, {"rd"}, "rd"), "axes", std::vector<int64_t>{2});
  attr(m.node("ArgMax", {"x"}, {"am"}, "am"), "axis", int64_t{3});
  m.node("TopK", {"x", "k"}, {"tv", "ti"}, "tk");
  m.node("InstanceNormalization", {"x", "s", "b"}, {"in"}, "in");
  m.node("LayerNormalization", {"x", "ls"}, {"ln"}, "ln");
  attr(m.node("LRN", {"x"}, {"lrn"}, "lrn"), "size", int64_t{3});
  m.node("NonMaxSuppression", {"boxes", "scores", "max"}, {"sel"}, "nms");
  return m;
}

TEST(Prepare, WrongOutputShapeOfEveryFamilyIsRefused) {
  const std::vector<uint8_t> good = convert_nn(every_family());
  const fb::Plan* plan = plan_of(good);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(load_error(good).first, JP_OK);
  for (const auto* s : *plan->steps()) {
    if (s->op() == OpFamily::Copy) continue;
    SCOPED_TRACE(s->name()->str());
    const uint32_t out = s->outputs()->Get(0);
    const Shape shape = tensor_shape(plan, out);
    // Two dims that differ: swapping them keeps the byte size.
    int a = -1, b = -1;
    for (int i = 0; i < static_cast<int>(shape.size()) && b < 0; ++i)
      for (int j = i + 1; j < static_cast<int>(shape.size()) && b < 0; ++j)
        if (shape[i] != shape[j]) a = i, b = j;
    ASSERT_GE(b, 0) << shape_str(shape);
    expect_refused(swap_dims(good, out, a, b), s->name()->str());
  }
}

TEST(Prepare, CorruptParamsAreRefused) {
  const std::vector<uint8_t> good = convert_nn(every_family());
  ASSERT_NE(plan_of(good), nullptr);
  // The step `name` of the plan being edited (offsets are taken from its own buffer).
  auto step_in = [](const std::vector<uint8_t>& b, const char* name) {
    return find_step(read_plan(b), name);
  };
  using Edit = std::function<void(std::vector<uint8_t>&)>;
  const std::tuple<const char*, Edit, jp_status> edits[] = {
      {"ct",
       [&](auto& b) {
         poke_element(b, step_in(b, "ct")->params_as_ConvTransposeParams()->stride(), 0, 2);
       },
       JP_ERROR_INVALID_PLAN},
      {"ct",
       [&](auto& b) {
         poke_element(b, step_in(b, "ct")->params_as_ConvTransposeParams()->pad_begin(), 1, 1);
       },
       JP_ERROR_INVALID_PLAN},
      {"rs",
       [&](auto& b) {
         poke_element(b, step_in(b, "rs")->params_as_ResizeParams()->scale(), 2, -2.0);
       },
       JP_ERROR_INVALID_PLAN},
      {"rs",
       [&](auto& b) {
         poke_element(b, step_in(b, "rs")->params_as_ResizeParams()->resized_length(), 3, NAN);
       },
       JP_ERROR_INVALID_PLAN},
      {"rd",
       [&](auto& b) { poke_element(b, step_in(b, "rd")->params_as_ReduceParams()->axes(), 0, 9); },
       JP_ERROR_INVALID_PLAN},
      {"rd",
       [&](auto& b) {
         poke(b, step_in(b, "rd")->params_as_ReduceParams(), fb::ReduceParams::VT_OP, uint8_t{10});
       },
       JP_ERROR_UNSUPPORTED},
      {"am",
       [&](auto& b) {
         poke(b, step_in(b, "am")->params_as_ArgReduceParams(), fb::ArgReduceParams::VT_AXIS,
              int32_t{2});
       },
       JP_ERROR_INVALID_PLAN},
      {"tk", [&](auto& b) { poke(b, step_in(b, "tk"), fb::Step::VT_WORKSPACE_BYTES, uint64_t{8}); },
       JP_ERROR_INVALID_PLAN},
      {"tk",
       [&](auto& b) {
         poke(b, step_in(b, "tk")->params_as_TopKParams(), fb::TopKParams::VT_AXIS, int32_t{7});
       },
       JP_ERROR_INVALID_PLAN},
      {"ln",
       [&](auto& b) {
         poke(b, step_in(b, "ln")->params_as_LayerNormParams(), fb::LayerNormParams::VT_AXIS,
              int32_t{2});
       },
       JP_ERROR_INVALID_PLAN},
      {"lrn",
       [&](auto& b) {
         poke(b, step_in(b, "lrn")->params_as_LrnParams(), fb::LrnParams::VT_SIZE, int64_t{0});
       },
       JP_ERROR_INVALID_PLAN},
      {"nms",
       [&](auto& b) {
         poke(b, step_in(b, "nms")->params_as_NmsParams(), fb::NmsParams::VT_MAX_OUTPUT_PER_CLASS,
              int64_t{3});
       },
       JP_ERROR_INVALID_PLAN},
      {"nms",
       [&](auto& b) { poke(b, step_in(b, "nms"), fb::Step::VT_WORKSPACE_BYTES, uint64_t{16}); },
       JP_ERROR_INVALID_PLAN},
  };
  for (const auto& [name, edit, status] : edits) {
    SCOPED_TRACE(name);
    std::vector<uint8_t> bad = good;
    edit(bad);
    expect_refused(bad, name, status);
  }
}

// A workspace that shares bytes with a tensor of its own step would let the kernel overwrite
// the indices it still reads.
TEST(Prepare, WorkspaceOverlappingTheStepsTensorsIsRefused) {
  ModelBuilder m(11);
  m.input("x", {2, 64}).output("y").output("i", onnx::TensorProto::INT64);
  m.initializer_i64("k", {1}, {4});
  m.node("TopK", {"x", "k"}, {"v", "i"}, "tk");
  m.node("Relu", {"v"}, {"y"}, "relu");
  const std::vector<uint8_t> good = convert_nn(m);
  const fb::Plan* plan = plan_of(good);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = find_step(plan, "tk");
  ASSERT_NE(s, nullptr);
  const fb::Tensor* values = plan->tensors()->Get(s->outputs()->Get(0));
  ASSERT_EQ(values->storage(), fb::Storage::Arena);
  ASSERT_NE(values->offset(), s->workspace_offset());
  // Point the workspace at the values (or the values at the workspace: one of them is stored).
  std::vector<uint8_t> bad = good;
  const fb::Plan* edited = read_plan(bad);
  const fb::Step* bad_step = find_step(edited, "tk");
  if (values->offset() != 0)
    poke(bad, edited->tensors()->Get(s->outputs()->Get(0)), fb::Tensor::VT_OFFSET,
         s->workspace_offset());
  else
    poke(bad, bad_step, fb::Step::VT_WORKSPACE_OFFSET, uint64_t{0});
  expect_refused(bad, "tk");
}

}  // namespace
}  // namespace jetplan::converter::testing
