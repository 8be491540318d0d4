// Explicit quantization (converter/src/precision/explicit_qdq.h): a model with its own Q/DQ pairs
// runs in INT8 with exactly its scales and integer weights, without calibration; the patterns
// jetplan's symmetric INT8 cannot honour are refused naming the node.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <random>

#include "converter/src/precision/int8_saturate.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

constexpr int64_t kCin = 16, kMid = 32, kOut = 16, kSize = 8;
constexpr float kXScale = 0.0213f, kR1Scale = 0.0371f, kC2Scale = 0.0598f;

// Fixed int8 weights and per-channel scales, the way a quantizer writes them.
struct QuantWeight {
  std::vector<int64_t> dims;
  std::vector<int32_t> q;
  std::vector<float> scales;
};

QuantWeight quant_weight(std::vector<int64_t> dims, uint32_t seed) {
  QuantWeight w{std::move(dims), {}, {}};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> q(-128, 127);
  std::uniform_real_distribution<float> s(0.001f, 0.004f);
  int64_t n = 1;
  for (int64_t d : w.dims) n *= d;
  for (int64_t i = 0; i < n; ++i) w.q.push_back(q(rng));
  for (int64_t o = 0; o < w.dims[0]; ++o) w.scales.push_back(s(rng));
  return w;
}

const QuantWeight& w1() {
  static const QuantWeight w = quant_weight({kMid, kCin, 3, 3}, 11);
  return w;
}
const QuantWeight& w2() {
  static const QuantWeight w = quant_weight({kOut, kMid, 1, 1}, 12);
  return w;
}

// What may be wrong with the model's quantization, for the refusal tests.
struct Flaw {
  int64_t x_zero_point = 0;
  bool x_uint8 = false;  // the input's pair without a zero point: uint8
  float x_scale = kXScale;
  bool per_axis_activation = false;
  float c2_scale = kC2Scale;  // conv2's output pair (small: many of its outputs saturate)
  bool pool_pair = false;     // a pair after the pool too (the graph output is its DQ)
  float pool_scale = kC2Scale / 4;  // that pair's scale
};

void add_scale_zp(ModelBuilder& m, const std::string& name, float scale, int64_t zp) {
  m.initializer(name + "_s", {}, {scale});
  m.empty_initializer(name + "_z", onnx::TensorProto::INT8, {})->add_int32_data(static_cast<int32_t>(zp));
}

// value -> Q -> DQ -> value + "_dq", with int8 zero point 0 (unless the flaw says otherwise).
void qdq(ModelBuilder& m, const std::string& value, float scale, int64_t zp = 0, bool uint8 = false) {
  add_scale_zp(m, value, scale, zp);
  std::vector<std::string> in = {value, value + "_s"};
  if (!uint8) in.push_back(value + "_z");
  m.node("QuantizeLinear", in, {value + "_q"}, value + "_Q");
  in[0] = value + "_q";
  m.node("DequantizeLinear", in, {value + "_dq"}, value + "_DQ");
}

void weight(ModelBuilder& m, const std::string& name, const QuantWeight& w) {
  auto* t = m.empty_initializer(name + "_q", onnx::TensorProto::INT8, w.dims);
  for (int32_t v : w.q) t->add_int32_data(v);
  m.initializer(name + "_s", {w.dims[0]}, w.scales);
  auto* z = m.empty_initializer(name + "_z", onnx::TensorProto::INT8, {w.dims[0]});
  for (int64_t o = 0; o < w.dims[0]; ++o) z->add_int32_data(0);
  attr(m.node("DequantizeLinear", {name + "_q", name + "_s", name + "_z"}, {name}, name + "_DQ"),
       "axis", int64_t{0});
}

// x -> pair -> conv1 (3x3, bias) -> relu -> pair -> conv2 (1x1) -> pair -> global pool -> y.
ModelBuilder qdq_net(const Flaw& f = {}) {
  ModelBuilder m;
  m.input("x", {1, kCin, kSize, kSize}).output("y");
  if (f.per_axis_activation) {
    m.initializer("x_s", {kCin}, std::vector<float>(kCin, kXScale));
    auto* z = m.empty_initializer("x_z", onnx::TensorProto::INT8, {kCin});
    for (int64_t c = 0; c < kCin; ++c) z->add_int32_data(0);
    m.node("QuantizeLinear", {"x", "x_s", "x_z"}, {"x_q"}, "x_Q");
    m.node("DequantizeLinear", {"x_q", "x_s", "x_z"}, {"x_dq"}, "x_DQ");
  } else {
    qdq(m, "x", f.x_scale, f.x_zero_point, f.x_uint8);
  }
  weight(m, "w1", w1());
  weight(m, "w2", w2());
  m.random("b1", {kMid}, -0.2f, 0.2f);
  attr(m.node("Conv", {"x_dq", "w1", "b1"}, {"c1"}, "conv1"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  qdq(m, "r1", kR1Scale);
  m.node("Conv", {"r1_dq", "w2"}, {"c2"}, "conv2");
  qdq(m, "c2", f.c2_scale);
  if (!f.pool_pair) {
    m.node("GlobalAveragePool", {"c2_dq"}, {"y"}, "pool");
    return m;
  }
  m.node("GlobalAveragePool", {"c2_dq"}, {"p"}, "pool");
  add_scale_zp(m, "p", f.pool_scale, 0);
  m.node("QuantizeLinear", {"p", "p_s", "p_z"}, {"p_q"}, "p_Q");
  m.node("DequantizeLinear", {"p_q", "p_s", "p_z"}, {"y"}, "p_DQ");
  return m;
}

ConvertResult convert(const ModelBuilder& m, const std::string& target, bool int8) {
  ConvertOptions options;
  options.target = target;
  if (int8) options.precision = Precision::kInt8;
  try {
    return convert_onnx(m.bytes(), "qdq.onnx", options);
  } catch (const ConvertError& e) {
    ADD_FAILURE() << e.what();
    return {};
  }
}

std::vector<float> input(uint32_t seed) {
  std::vector<float> v(kCin * kSize * kSize);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.5f, 2.5f);
  for (float& e : v) e = dist(rng);
  return v;
}

// The plan's INT8 convs hold the model's integers (permuted to OHWI) and its scales: the
// epilogue's multiplier is x's scale times the weight's, conv1's output scale is r1's.
TEST(ExplicitQdq, PlanHoldsTheModelsIntegersAndScales) {
  const ConvertResult r = convert(qdq_net(), "cpu", true);
  ASSERT_FALSE(r.plan.empty());
  EXPECT_EQ(r.summary.int8_steps, 2u);
  EXPECT_EQ(r.summary.qdq_pairs, 3u);
  EXPECT_EQ(r.summary.explicit_weights, 2u);
  EXPECT_EQ(r.summary.calibration_samples, 0u);
  EXPECT_THAT(format_summary("p", r.summary), ::testing::HasSubstr("scales from the model's 3 Q/DQ pairs"));
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  std::vector<const fb::Step*> convs;
  for (const auto* s : *p->steps())
    if (s->op() == fb::OpFamily::Conv) convs.push_back(s);
  ASSERT_EQ(convs.size(), 2u);
  const QuantWeight* weights[] = {&w1(), &w2()};
  const float x_scales[] = {kXScale, kR1Scale};
  for (size_t k = 0; k < 2; ++k) {
    const fb::Tensor* wt = p->tensors()->Get(convs[k]->inputs()->Get(1));
    ASSERT_EQ(wt->dtype(), fb::DType::Int8);
    const auto* bytes = reinterpret_cast<const int8_t*>(p->weights()->data() + wt->offset());
    const QuantWeight& w = *weights[k];
    const int64_t oc = w.dims[0], ic = w.dims[1], kh = w.dims[2], kw = w.dims[3];
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t c = 0; c < ic; ++c)
        for (int64_t y = 0; y < kh; ++y)
          for (int64_t x = 0; x < kw; ++x)
            ASSERT_EQ(bytes[((o * kh + y) * kw + x) * ic + c], w.q[((o * ic + c) * kh + y) * kw + x])
                << "conv" << k + 1 << " weight " << o << "," << c << "," << y << "," << x;
    const fb::Tensor* et = p->tensors()->Get(convs[k]->inputs()->Get(2));
    const auto* epi = reinterpret_cast<const float*>(p->weights()->data() + et->offset());
    for (int64_t o = 0; o < oc; ++o) EXPECT_EQ(epi[o], x_scales[k] * w.scales[static_cast<size_t>(o)]);
  }
  EXPECT_EQ(convs[0]->params_as_ConvParams()->y_scale(), kR1Scale);
}

// The INT8 plan against the model run literally (jetplan's CPU target executes QuantizeLinear
// and DequantizeLinear as ONNX defines them): the same roundings but for those the fused steps
// absorb (conv2's output pair before the pooling), so the outputs agree to well within one
// quantization step.
TEST(ExplicitQdq, Int8PlanAgreesWithTheModelRunLiterally) {
  const ConvertResult int8 = convert(qdq_net(), "cpu", true);
  const ConvertResult literal = convert_ok(qdq_net());
  EXPECT_FALSE(literal.summary.int8);  // the CPU target's default runs the nodes as they are
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const std::vector<float> x = input(seed);
    const auto want = float_outputs(run_plan(literal.plan, {x}))[0];
    const auto got = float_outputs(run_plan(int8.plan, {x}))[0];
    ASSERT_EQ(got.size(), static_cast<size_t>(kOut));
    double signal = 0, worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_FALSE(std::isnan(got[i]));
      signal += double(want[i]) * want[i];
      worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    }
    EXPECT_GT(signal, 1e-3) << "a test whose outputs are all zero proves nothing";
    EXPECT_LT(worst, 0.5 * kC2Scale) << "input seed " << seed;
  }
}

// A removed pair keeps its clip to int8's range, [-128 s, 127 s]: conv2's (a small scale, so
// most of its outputs saturate) in conv2's fused activation, the pool's (no fused activation)
// as a Clip step after it. The plan then agrees with the model run literally, where the
// saturated values would otherwise be many steps off.
TEST(ExplicitQdq, RemovedPairsKeepTheirSaturation) {
  Flaw f;
  f.c2_scale = 0.004f;
  f.pool_pair = true;
  f.pool_scale = f.c2_scale / 4;
  const ConvertResult int8 = convert(qdq_net(f), "cpu", true);
  ASSERT_FALSE(int8.plan.empty());
  EXPECT_EQ(int8.summary.saturation_steps, 1u);
  EXPECT_THAT(format_summary("p", int8.summary), ::testing::HasSubstr("1 clip steps"));
  const fb::Plan* p = fb::GetPlan(int8.plan.data());
  const fb::Step* conv2 = nullptr;
  const fb::Step* clip = nullptr;
  const fb::Step* pool = nullptr;
  for (const auto* s : *p->steps()) {
    if (s->op() == fb::OpFamily::Conv) conv2 = s;  // the last conv
    if (s->op() == fb::OpFamily::Activation) clip = s;
    if (s->op() == fb::OpFamily::Pool) pool = s;
  }
  ASSERT_NE(conv2, nullptr);
  const fb::Activation* act = conv2->params_as_ConvParams()->activation();
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->kind(), fb::ActivationKind::Clip);
  EXPECT_EQ(act->alpha(), -128.f * f.c2_scale);
  EXPECT_EQ(act->beta(), 127.f * f.c2_scale);
  ASSERT_NE(clip, nullptr);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(clip->inputs()->Get(0), pool->outputs()->Get(0));
  const fb::Activation* pool_act = clip->params_as_ActivationParams()->activation();
  EXPECT_EQ(pool_act->kind(), fb::ActivationKind::Clip);
  EXPECT_EQ(pool_act->beta(), 127.f * f.pool_scale);

  const ConvertResult literal = convert_ok(qdq_net(f));
  size_t at_bound = 0;
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const std::vector<float> x = input(seed);
    const auto want = float_outputs(run_plan(literal.plan, {x}))[0];
    const auto got = float_outputs(run_plan(int8.plan, {x}))[0];
    ASSERT_EQ(got.size(), static_cast<size_t>(kOut));
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_FALSE(std::isnan(got[i]));
      EXPECT_LE(std::fabs(got[i]), 128.f * f.pool_scale) << "past the pool pair's range";
      // The plan keeps neither pair's rounding: conv2's outputs within half its step each (so
      // their average too), the pool's within half of its step (c2 / 4 here).
      EXPECT_LT(std::fabs(double(got[i]) - want[i]), 0.625 * f.c2_scale) << "seed " << seed;
      at_bound += std::fabs(want[i]) >= 127.f * f.pool_scale * 0.999f;
    }
  }
  EXPECT_GT(at_bound, 0u) << "no output saturates: the test proves nothing";

  // A pool pair at least as wide as its input's needs no clip: the pool of values already in
  // [-128 s_in, 127 s_in] stays there.
  f.pool_scale = f.c2_scale;
  EXPECT_EQ(convert(qdq_net(f), "cpu", true).summary.saturation_steps, 0u);
}

// A GPU target needs neither --precision nor --calib for a Q/DQ model: its convs get INT8
// kernels and the plan loads.
TEST(ExplicitQdq, GpuTargetsRunQdqModelsInInt8WithoutCalibration) {
  const ConvertResult r = convert(qdq_net(), "h100", false);
  ASSERT_FALSE(r.plan.empty());
  EXPECT_TRUE(r.summary.int8);
  size_t int8_kernels = 0;
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  for (const auto* s : *p->steps())
    int8_kernels += s->op() == fb::OpFamily::Conv && s->kernel() != nullptr &&
                    s->kernel()->str().find("_i8") != std::string::npos;
  EXPECT_EQ(int8_kernels, 2u);
  // The input is quantized from its Float32 values (its layout transpose moves Float32), not
  // from FP16 roundings of them.
  size_t f32_quantize = 0;
  for (const auto* s : *p->steps())
    f32_quantize += s->op() == fb::OpFamily::Quantize &&
                    p->tensors()->Get(s->inputs()->Get(0))->dtype() == fb::DType::Float32 &&
                    s->kernel()->str() == "jp_quantize_f32_i8";
  EXPECT_EQ(f32_quantize, 1u);
  jp_plan* loaded = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_NO_DEVICE, &loaded), JP_OK)
      << jp_last_error();
  jp_plan_destroy(loaded);
  EXPECT_EQ(convert(qdq_net(), "h100", false).plan, r.plan);  // byte-identical
  // A Float32 GPU plan cannot honour the pairs: refused, saying what to do instead.
  ConvertOptions fp32;
  fp32.target = "h100";
  fp32.precision = ConvertOptions::Precision::kFp32;
  EXPECT_THAT(convert_error(qdq_net(), fp32),
              ::testing::HasSubstr("--precision fp32: the model carries QuantizeLinear"));
}

TEST(ExplicitQdq, PatternsSymmetricInt8CannotHonourAreRefusedNamingTheNode) {
  const std::pair<Flaw, std::string> cases[] = {
      {Flaw{3}, "'x_Q' (QuantizeLinear): zero point 3"},
      {Flaw{0, true}, "'x_Q' (QuantizeLinear): quantizes to uint8"},
      {Flaw{0, false, 0.f}, "'x_Q' (QuantizeLinear): scale 0"},
      {Flaw{0, false, NAN}, "'x_Q' (QuantizeLinear): scale nan"},
      {Flaw{0, false, INFINITY}, "'x_Q' (QuantizeLinear): scale inf"},
      {Flaw{0, false, kXScale, true}, "'x_Q' (QuantizeLinear): 16 scales for an activation"},
  };
  for (const auto& [flaw, message] : cases) {
    ConvertOptions gpu;
    gpu.target = "h100";
    EXPECT_THAT(convert_error(qdq_net(flaw), gpu), ::testing::HasSubstr(message));
  }
}

// The scales and calibrated ranges of a GPU draft's tensors are looked up by their FP32 graph
// names: layout twins (and twins of twins) and permuted weights are the tensor they copy.
TEST(DraftGraphName, LayoutTwinsAreTheTensorTheyCopy) {
  EXPECT_EQ(draft_graph_name("conv1"), "conv1");
  EXPECT_EQ(draft_graph_name("conv1:nhwc"), "conv1");
  EXPECT_EQ(draft_graph_name("cat:nchw"), "cat");
  EXPECT_EQ(draft_graph_name("x:nhwc:nchw"), "x");
  EXPECT_EQ(draft_graph_name("w:ohwi"), "w");
  EXPECT_EQ(draft_graph_name("a:nhwc.b"), "a:nhwc.b");  // not a suffix
  EXPECT_EQ(draft_graph_name(":nhwc"), ":nhwc");         // nothing would be left
}

}  // namespace
}  // namespace jetplan::converter::testing
