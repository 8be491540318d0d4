// Convs whose weight (and bias) come at run time, a graph input or computed in the graph, in GPU
// plans: the CUDA conv kernels read channels_last x and [Cout, *kernel, Cin / groups] weights, so
// gpu_layout puts a Transpose step in front of each such weight (the Float16 it writes is what
// the kernels read), and permutes a constant x (ONNX's causal conv with its input frozen) at
// conversion. Checked four ways: every form converts for each kind of GPU target and loads
// without a device; the plan holds the transposed weights and the kernels meant for each form;
// the same lowering on the CPU twins (which take channels_last) gives the NCHW plan's outputs,
// which a wrong permutation would not; and, on a machine with an sm_90 GPU (skipped, saying
// why, elsewhere), the GPU plan gives the CPU plan's outputs, with early launches or without.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/half.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/gpu_pipeline.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

// x [2, 6, 9, 9] -> Conv 3x3 stride 2 pad 1 of the graph inputs "w" [16, 6, 3, 3] and "b" [16]
// + Relu (6 input channels: the igemm tile of any Cin) -> r; r -> depthwise Conv 7x7 pad 3 of
// "wd" [16, 1, 7, 7] + residual r -> "y" (the tiled depthwise kernel, which stages a run-time
// weight after its wait for the step before); r -> Conv 3x3 groups 4 dilation 2 pad 2 of a
// weight computed in the graph, 0.5 * "wg" [16, 4, 3, 3] -> "z" (the grouped igemm); r -> Conv
// 1x1 of "wp" [8, 16, 1, 1] -> "p" (the igemm tiles).
ModelBuilder run_time_weight_convs() {
  ModelBuilder m(13);
  m.input("x", {2, 6, 9, 9}).input("w", {16, 6, 3, 3}).input("b", {16});
  m.input("wd", {16, 1, 7, 7}).input("wg", {16, 4, 3, 3}).input("wp", {8, 16, 1, 1});
  m.output("y").output("z").output("p");
  m.initializer("half", {}, {0.5f});
  auto& c = m.node("Conv", {"x", "w", "b"}, {"c"}, "dense");
  attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  attr(c, "strides", std::vector<int64_t>{2, 2});
  m.node("Relu", {"c"}, {"r"}, "relu");
  auto& dw = m.node("Conv", {"r", "wd"}, {"d"}, "depthwise");
  attr(dw, "pads", std::vector<int64_t>{3, 3, 3, 3});
  attr(dw, "group", int64_t{16});
  m.node("Add", {"d", "r"}, {"y"}, "residual");
  m.node("Mul", {"wg", "half"}, {"wgs"}, "weight_scale");
  auto& g = m.node("Conv", {"r", "wgs"}, {"z"}, "grouped");
  attr(g, "pads", std::vector<int64_t>{2, 2, 2, 2});
  attr(g, "dilations", std::vector<int64_t>{2, 2});
  attr(g, "group", int64_t{4});
  m.node("Conv", {"r", "wp"}, {"p"}, "pointwise");
  return m;
}

// ONNX's CausalConvWithState as its _expanded node tests convert with their input frozen: a
// constant x "xc" [2, 8, 11] (the zero-padded input) -> depthwise Conv1d k4 of the graph inputs
// "w" [8, 1, 4] and "b" [8] -> SiLU -> "y" [2, 8, 8]; the same "w" over the graph input a [2, 8,
// 20] at stride 2, dilation 2 -> "u" [2, 8, 7]; and the graph input v [1, 4, 5, 6, 6] -> Conv3d
// groups 2 of "w3" [6, 2, 3, 3, 3], strides (1, 2, 2), dilations (2, 1, 1), pads (1, 1, 0) at
// the start and (1, 0, 1) at the end -> "t" [1, 6, 3, 3, 3].
ModelBuilder causal_conv() {
  ModelBuilder m(13);
  m.input("w", {8, 1, 4}).input("b", {8}).input("a", {2, 8, 20}).input("v", {1, 4, 5, 6, 6});
  m.input("w3", {6, 2, 3, 3, 3}).output("y").output("u").output("t");
  m.random("xc", {2, 8, 11});
  attr(m.node("Conv", {"xc", "w", "b"}, {"c"}, "causal"), "group", int64_t{8});
  m.node("Sigmoid", {"c"}, {"sg"}, "gate");
  m.node("Mul", {"c", "sg"}, {"y"}, "silu");
  auto& s = m.node("Conv", {"a", "w"}, {"u"}, "strided");
  attr(s, "group", int64_t{8});
  attr(s, "strides", std::vector<int64_t>{2});
  attr(s, "dilations", std::vector<int64_t>{2});
  auto& v = m.node("Conv", {"v", "w3"}, {"t"}, "video");
  attr(v, "group", int64_t{2});
  attr(v, "strides", std::vector<int64_t>{1, 2, 2});
  attr(v, "dilations", std::vector<int64_t>{2, 1, 1});
  attr(v, "pads", std::vector<int64_t>{1, 1, 0, 1, 0, 1});
  return m;
}

struct Model {
  const char* name;
  ModelBuilder builder;
  // Per Conv step, by the ONNX node its name starts with: the kernel (or the start of its name)
  // the h100 plan runs it with.
  std::vector<std::pair<std::string, std::string>> kernels;
  size_t weight_transposes;  // one per run-time weight tensor, however many convs read it
};

std::vector<Model> models() {
  return {{"run_time_weight_convs",
           run_time_weight_convs(),
           {{"dense", "jp_conv_igemm_64x64_anyc_f16"},
            {"depthwise", "jp_conv_dw7_f16"},
            {"grouped", "jp_conv_igemm_32x64_grouped_f16"},
            {"pointwise", "jp_conv_igemm_"}},
           4},
          {"causal_conv",
           causal_conv(),
           {{"causal", "jp_conv_depthwise_f16"},
            {"strided", "jp_conv_depthwise_f16"},
            {"video", "jp_conv_direct_f16"}},
           2}};
}

ConvertResult convert_for(const ModelBuilder& m, const char* target) {
  ConvertOptions o;
  o.target = target;
  return convert_onnx(m.bytes(), "model.onnx", o);
}

// The permutation into channels last of a rank-r tensor: [0, 2, ..., r - 1, 1].
std::vector<int32_t> channels_last_perm(size_t r) {
  std::vector<int32_t> perm{0};
  for (int32_t d = 2; d < static_cast<int32_t>(r); ++d) perm.push_back(d);
  perm.push_back(1);
  return perm;
}

// The step that writes tensor `t` (null if none does).
const fb::Step* writer_of(const fb::Plan* plan, uint32_t t) {
  for (const auto* s : *plan->steps())
    for (uint32_t o : *s->outputs())
      if (o == t) return s;
  return nullptr;
}

std::vector<int64_t> dims_of(const fb::Tensor* t) {
  return std::vector<int64_t>(t->shape()->begin(), t->shape()->end());
}

// Every Conv step of `plan` runs channels last: x NHWC, and its weight [Cout, *kernel, Cin /
// groups] written by a Transpose into channels last of the weight the model gives ([Cout, Cin /
// groups, *kernel]). Returns how many weight tensors such Transposes write.
size_t expect_channels_last_convs(const fb::Plan* plan) {
  size_t transposes = 0, convs = 0;
  std::vector<bool> counted(plan->tensors()->size(), false);
  for (const auto* s : *plan->steps()) {
    if (s->op() != fb::OpFamily::Conv) continue;
    ++convs;
    SCOPED_TRACE(s->name()->str());
    const fb::Tensor* x = plan->tensors()->Get(s->inputs()->Get(0));
    const uint32_t wi = s->inputs()->Get(1);
    const fb::Tensor* w = plan->tensors()->Get(wi);
    EXPECT_EQ(x->layout(), fb::Layout::NHWC);
    const std::vector<int64_t> xd = dims_of(x), wd = dims_of(w);
    EXPECT_EQ(wd.back() * s->params_as_ConvParams()->groups(), xd.back())
        << "the weight's last dim is Cin / groups";
    const fb::Step* t = writer_of(plan, wi);
    if (t == nullptr || t->op() != fb::OpFamily::Transpose) {
      ADD_FAILURE() << "the weight is written by no Transpose step";
      continue;
    }
    const auto* perm = t->params_as_TransposeParams()->perm();
    EXPECT_EQ(std::vector<int32_t>(perm->begin(), perm->end()), channels_last_perm(wd.size()));
    const std::vector<int64_t> from = dims_of(plan->tensors()->Get(t->inputs()->Get(0)));
    std::vector<int64_t> want{from[0]};
    want.insert(want.end(), from.begin() + 2, from.end());
    want.push_back(from[1]);
    EXPECT_EQ(wd, want) << "[Cout, Cin / groups, *kernel] -> [Cout, *kernel, Cin / groups]";
    if (!counted[wi]) ++transposes;
    counted[wi] = true;
  }
  EXPECT_GE(convs, 3u);
  return transposes;
}

const fb::Step* conv_named(const fb::Plan* plan, const std::string& node) {
  for (const auto* s : *plan->steps())
    if (s->op() == fb::OpFamily::Conv && s->name()->str().rfind(node, 0) == 0) return s;
  return nullptr;
}

TEST(GpuRunTimeConvWeights, ConvertForEveryKindOfGpuTargetAndLoadWithoutADevice) {
  for (const Model& model : models())
    for (const char* target : {"orin-agx", "orin-nano", "thor", "h100"}) {
      SCOPED_TRACE(std::string(model.name) + " for " + target);
      ConvertResult r;
      try {
        r = convert_for(model.builder, target);
      } catch (const ConvertError& e) {
        ADD_FAILURE() << "conversion failed: " << e.what();
        continue;
      }
      EXPECT_TRUE(loads_without_device(r.plan));
    }
}

TEST(GpuRunTimeConvWeights, WeightsTransposedOnTheGpuAndEachFormOnItsKernel) {
  for (const Model& model : models()) {
    SCOPED_TRACE(model.name);
    const ConvertResult r = convert_for(model.builder, "h100");
    const fb::Plan* plan = plan_of(r);
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(expect_channels_last_convs(plan), model.weight_transposes);
    for (const auto& [node, kernel] : model.kernels) {
      const fb::Step* s = conv_named(plan, node);
      ASSERT_NE(s, nullptr) << node;
      EXPECT_THAT(s->kernel()->str(), StartsWith(kernel)) << node;
      // The weight and x the kernel reads are Float16, as every float tensor in the plan.
      EXPECT_EQ(plan->tensors()->Get(s->inputs()->Get(1))->dtype(), fb::DType::Float16) << node;
    }
  }
}

// The causal conv's constant x is permuted at conversion into a Float16 NHWC weight [2, 11, 8]
// holding xc[n, c, l] at [n, l, c]: no Transpose runs on it.
TEST(GpuRunTimeConvWeights, ConstantInputPermutedAtConversion) {
  ModelBuilder m = causal_conv();
  const ConvertResult r = convert_for(m, "h100");
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = conv_named(plan, "causal");
  ASSERT_NE(s, nullptr);
  const fb::Tensor* x = plan->tensors()->Get(s->inputs()->Get(0));
  EXPECT_EQ(x->storage(), fb::Storage::Weight);
  EXPECT_EQ(x->layout(), fb::Layout::NHWC);
  EXPECT_EQ(x->dtype(), fb::DType::Float16);
  ASSERT_THAT(dims_of(x), ElementsAre(2, 11, 8));
  const onnx::TensorProto& xc = m.model().graph().initializer(0);
  ASSERT_EQ(xc.name(), "xc");
  const auto* half = reinterpret_cast<const uint16_t*>(plan->weights()->data() + x->offset());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 8; ++c)
      for (int l = 0; l < 11; ++l)
        ASSERT_EQ(half[(n * 11 + l) * 8 + c],
                  kernels::half_from_float(xc.float_data((n * 8 + c) * 11 + l)))
            << n << " " << c << " " << l;
}

// Random float32 values in [-1, 1] for every input of the plan, in binding order.
std::vector<std::vector<float>> random_inputs(const std::vector<uint8_t>& plan, uint32_t seed) {
  std::vector<std::vector<float>> in;
  jp_plan* p = nullptr;
  if (jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE, &p) !=
      JP_OK) {
    ADD_FAILURE() << jp_last_error();
    return in;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int32_t i = 0; i < jp_plan_num_inputs(p); ++i) {
    jp_tensor_desc d{};
    EXPECT_EQ(jp_plan_input_desc(p, i, &d), JP_OK);
    EXPECT_EQ(d.dtype, JP_FLOAT32);
    std::vector<float> v(d.bytes / sizeof(float));
    for (float& e : v) e = dist(rng);
    in.push_back(std::move(v));
  }
  jp_plan_destroy(p);
  return in;
}

// Every element of every output within |got - want| <= abs + rel * |want| (NaN never passes).
void expect_close(const std::vector<std::vector<float>>& got,
                  const std::vector<std::vector<float>>& want, float abs, float rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << "output " << o;
    for (size_t i = 0; i < want[o].size(); ++i)
      ASSERT_TRUE(std::fabs(got[o][i] - want[o][i]) <= abs + rel * std::fabs(want[o][i]))
          << "output " << o << " element " << i << ": got " << got[o][i] << ", want "
          << want[o][i];
  }
}

// The GPU plan's lowering (gpu_layout: the weight Transposes, the permuted constant x, NHWC
// convs) in float32 on the CPU twins gives the NCHW CPU plan's outputs to float32 rounding.
TEST(GpuRunTimeConvWeights, ChannelsLastFormOnTheCpuTwinsGivesTheNchwPlansOutputs) {
  for (const Model& model : models()) {
    SCOPED_TRACE(model.name);
    const std::vector<uint8_t> nchw = convert_ok(model.builder).plan;
    const std::vector<std::vector<float>> in = random_inputs(nchw, 5);
    const std::vector<uint8_t> nhwc = nhwc_cpu_plan(model.builder.bytes(), GpuPipeline{});
    EXPECT_EQ(expect_channels_last_convs(fb::GetPlan(nhwc.data())), model.weight_transposes);
    expect_close(float_outputs(run_plan(nhwc, in)), float_outputs(run_plan(nchw, in)), 1e-4f,
                 1e-4f);
  }
}

// The model's h100 plan loaded on this machine's GPU, or null (and the reason in *why).
jp_plan* load_on_gpu(const std::vector<uint8_t>& plan, std::string* why) {
  jp_plan* loaded = nullptr;
  if (jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &loaded) == JP_OK)
    return loaded;
  *why = jp_last_error();
  return nullptr;
}

// On an sm_90 GPU (h100 plans; an H200 runs them too): the CPU plan's outputs within float16's
// tolerance (|gpu - cpu| <= 3e-2 + 3e-2 |cpu|: float16 storage through two convs of inputs and
// weights in [-1, 1]); and the same bits with early (programmatic dependent) launches as
// without, run after run: a conv kernel that read its run-time weight before waiting for the
// Transpose that writes it would differ.
TEST(GpuRunTimeConvWeights, GpuPlanMatchesTheCpuPlanOnThisGpu) {
  for (const Model& model : models()) {
    SCOPED_TRACE(model.name);
    const ConvertResult g = convert_for(model.builder, "h100");
    std::string why;
    jp_plan* loaded = load_on_gpu(g.plan, &why);
    if (loaded == nullptr) GTEST_SKIP() << "no sm_90 GPU takes the plan here: " << why;
    jp_plan_destroy(loaded);
    const std::vector<uint8_t> cpu = convert_ok(model.builder).plan;
    const std::vector<std::vector<float>> in = random_inputs(cpu, 29);
    expect_close(float_outputs(run_plan(g.plan, in)), float_outputs(run_plan(cpu, in)), 3e-2f,
                 3e-2f);
    std::vector<PlanInput> raw;
    for (const auto& v : in) raw.push_back({v.data(), v.size() * sizeof(float)});
    expect_early_launches_give_the_same_bits(g.plan, raw);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
