// The NHWC layout pass checked by numbers, without a GPU: a float32 plan with gpu_layout applied
// (Transposes, permuted conv weights, per-channel constants as [1, 1, 1, C], Concat on axis 3,
// Copy of [N, 1, 1, C]) runs on the CPU twins, which take channels_last, and must give the
// plain CPU plan's outputs.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <map>
#include <random>

#include "tests/converter/util/plan_runner.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/lower/gpu_plan_models.h"
#include "tests/converter/util/gpu_pipeline.h"

namespace jetplan::converter::testing {
namespace {

void batch_norm(ModelBuilder& m, const std::string& name, int64_t c) {
  m.random(name + "_s", {c}, 0.8f, 1.2f).random(name + "_b", {c}, -0.2f, 0.2f);
  m.random(name + "_m", {c}, -0.2f, 0.2f).random(name + "_v", {c}, 0.5f, 1.5f);
}

// A small network over every rule of the pass: conv (strided, grouped, 1x1 on [N, C, 1, 1]),
// BatchNorm, max/average/global pooling, a residual Add of two NHWC tensors, Concat on
// channels, an SE-style Mul by an [N, C, 1, 1] tensor, a per-channel constant Add, a 4-D
// graph output, Flatten of [N, 1, 1, C], Gemm, Softmax, a Transpose-requiring consumer
// (Softmax over channels of a 4-D tensor), and a fire module whose Concat the convs write.
ModelBuilder net() {
  ModelBuilder m;
  m.input("x", {2, 3, 16, 16}).output("prob").output("feat").output("chsoft").output("firevec");
  m.random("w1", {8, 3, 3, 3}, -0.4f, 0.4f).random("b1", {8});
  batch_norm(m, "bn1", 8);
  m.random("w2", {8, 8, 3, 3}, -0.2f, 0.2f).random("w3", {8, 8, 3, 3}, -0.2f, 0.2f);
  m.random("wd", {8, 1, 3, 3}, -0.4f, 0.4f);
  m.random("ws1", {4, 16, 1, 1}, -0.3f, 0.3f).random("bs1", {4});
  m.random("ws2", {16, 4, 1, 1}, -0.5f, 0.5f).random("bs2", {16});
  m.random("chan", {16, 1, 1}).random("fw", {5, 16}, -0.3f, 0.3f).random("fb", {5});
  auto pads = std::vector<int64_t>{1, 1, 1, 1};
  auto& c1 = m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  attr(c1, "pads", pads);
  attr(c1, "strides", std::vector<int64_t>{2, 2});
  m.node("BatchNormalization", {"c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"}, {"n1"}, "bn1");
  m.node("Relu", {"n1"}, {"r1"}, "relu1");
  auto& p1 = m.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  attr(p1, "kernel_shape", std::vector<int64_t>{3, 3});
  attr(p1, "strides", std::vector<int64_t>{2, 2});
  attr(p1, "pads", pads);
  attr(m.node("Conv", {"p1", "w2"}, {"c2"}, "conv2"), "pads", pads);
  m.node("Relu", {"c2"}, {"r2"}, "relu2");
  attr(m.node("Conv", {"r2", "w3"}, {"c3"}, "conv3"), "pads", pads);
  m.node("Add", {"c3", "p1"}, {"a3"}, "add3");
  m.node("Relu", {"a3"}, {"r3"}, "relu3");
  auto& dw = m.node("Conv", {"r3", "wd"}, {"d4"}, "dw4");
  attr(dw, "pads", pads);
  attr(dw, "group", int64_t{8});
  attr(m.node("Concat", {"r3", "d4"}, {"cat"}, "cat"), "axis", int64_t{1});
  m.node("GlobalAveragePool", {"cat"}, {"g"}, "gap");
  m.node("Conv", {"g", "ws1", "bs1"}, {"s1"}, "se1");
  m.node("Relu", {"s1"}, {"sr"}, "se_relu");
  m.node("Conv", {"sr", "ws2", "bs2"}, {"s2"}, "se2");
  m.node("Sigmoid", {"s2"}, {"sg"}, "se_sig");
  m.node("Mul", {"cat", "sg"}, {"se"}, "se_mul");
  m.node("Add", {"se", "chan"}, {"feat"}, "chan_add");
  attr(m.node("Softmax", {"se"}, {"chsoft"}, "chsoft"), "axis", int64_t{1});
  auto& ap = m.node("AveragePool", {"feat"}, {"ap"}, "apool");
  attr(ap, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(ap, "strides", std::vector<int64_t>{2, 2});
  m.node("GlobalAveragePool", {"ap"}, {"g2"}, "gap2");
  m.node("Flatten", {"g2"}, {"f"}, "flatten");
  attr(m.node("Gemm", {"f", "fw", "fb"}, {"logits"}, "fc"), "transB", int64_t{1});
  attr(m.node("Softmax", {"logits"}, {"prob"}, "softmax"), "axis", int64_t{1});
  // A fire module (SqueezeNet): two conv+relu branches concatenated along channels, which the
  // convs write in place (3 and 5 channels: the second starts at an odd channel).
  m.random("we1", {3, 16, 1, 1}, -0.4f, 0.4f).random("be1", {3});
  m.random("we3", {5, 16, 3, 3}, -0.2f, 0.2f).random("be3", {5});
  m.node("Conv", {"ap", "we1", "be1"}, {"e1"}, "expand1");
  m.node("Relu", {"e1"}, {"e1r"}, "expand1_relu");
  attr(m.node("Conv", {"ap", "we3", "be3"}, {"e3"}, "expand3"), "pads", pads);
  m.node("Relu", {"e3"}, {"e3r"}, "expand3_relu");
  attr(m.node("Concat", {"e1r", "e3r"}, {"fire"}, "fire"), "axis", int64_t{1});
  m.node("GlobalAveragePool", {"fire"}, {"g3"}, "gap3");
  m.node("Flatten", {"g3"}, {"firevec"}, "flatten3");
  return m;
}

// The NHWC plan's outputs against the NCHW plan's: the same to 1e-4 (relative and absolute;
// only the order of float32 sums may differ).
void expect_same_outputs(const std::vector<std::vector<float>>& got,
                         const std::vector<std::vector<float>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << o;
    for (size_t i = 0; i < want[o].size(); ++i)
      ASSERT_NEAR(got[o][i], want[o][i], 1e-4f + 1e-4f * std::fabs(want[o][i]))
          << "output " << o << " element " << i;
  }
}

// n inputs uniform in [-1, 1] from `seed`.
std::vector<float> uniform_input(size_t n, unsigned seed) {
  std::vector<float> input(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& v : input) v = dist(rng);
  return input;
}

TEST(GpuLayoutOnCpuTwins, SameOutputsAsTheNchwPlan) {
  const std::string bytes = net().bytes();
  const std::vector<float> input = uniform_input(2 * 3 * 16 * 16, 7);
  for (bool fuse_nodes : {true, false}) {
    ConvertOptions options;
    options.fuse = fuse_nodes;
    const auto want = float_outputs(run_plan(convert_ok(net(), options).plan, {input}));
    const std::vector<uint8_t> nhwc = nhwc_cpu_plan(bytes, GpuPipeline{fuse_nodes});
    // The pass did put NHWC tensors and Transposes in.
    const fb::Plan* plan = fb::GetPlan(nhwc.data());
    size_t nhwc_tensors = 0, transposes = 0;
    for (const auto* t : *plan->tensors()) nhwc_tensors += t->layout() == fb::Layout::NHWC;
    size_t concats = 0, slices = 0, copies = 0;
    for (const auto* s : *plan->steps()) {
      const bool copy = s->op() == fb::OpFamily::Transpose &&
                        s->params_as_TransposeParams()->y_block() != 0;
      transposes += s->op() == fb::OpFamily::Transpose && !copy;
      copies += copy;
      concats += s->op() == fb::OpFamily::Concat;
      if (s->op() == fb::OpFamily::Conv) slices += s->params_as_ConvParams()->y_channel_offset() > 0;
    }
    EXPECT_GT(nhwc_tensors, 10u);
    // The depthwise conv writes its channels of "cat" in place, and r3, which conv dw4 reads
    // too, is copied into its own (an identity Transpose). Fused, the fire module's convs (with
    // their Relu) write its Concat in place; unfused, Relu steps produce both its inputs.
    EXPECT_EQ(concats, fuse_nodes ? 0u : 1u);
    EXPECT_EQ(slices, fuse_nodes ? 2u : 1u);
    EXPECT_EQ(copies, 1u);
    // x in, feat out (a 4-D output binding), se into the channel Softmax (NCHW only).
    EXPECT_EQ(transposes, 3u) << "fuse " << fuse_nodes;
    SCOPED_TRACE("fuse " + std::to_string(fuse_nodes));
    expect_same_outputs(float_outputs(run_plan(nhwc, {input})), want);
  }
}

// 1-D and 3-D convs run channels last as well ([N, L, C] and [N, D, H, W, C], weights [Cout,
// *kernel, Cin / groups]), the Binary and Pointwise steps between them follow (a per-channel
// constant as [1, 1, C] or [1, 1, 1, 1, C]), and the normalizations, NCHW only, get
// Transposes: the same outputs as the NCHW plan.
TEST(GpuLayoutOnCpuTwins, OneAndThreeDimensionalConvsRunChannelsLast) {
  struct Model {
    ModelBuilder builder;
    size_t input_elements, rank;
  };
  const Model models[] = {{gpu_speech_encoder(), 2 * 4 * 50, 3},
                          {gpu_video_stem(), 1 * 3 * 4 * 8 * 8, 5}};
  for (const Model& model : models) {
    SCOPED_TRACE("rank " + std::to_string(model.rank));
    const std::vector<float> input = uniform_input(model.input_elements, 11);
    const auto want = float_outputs(run_plan(convert_ok(model.builder).plan, {input}));
    const std::vector<uint8_t> nhwc = nhwc_cpu_plan(model.builder.bytes(), GpuPipeline{});
    const fb::Plan* plan = fb::GetPlan(nhwc.data());
    size_t convs = 0;
    for (const auto* s : *plan->steps()) {
      if (s->op() != fb::OpFamily::Conv) continue;
      const auto* x = plan->tensors()->Get(s->inputs()->Get(0));
      EXPECT_EQ(x->layout(), fb::Layout::NHWC) << s->name()->str();
      EXPECT_EQ(x->shape()->size(), model.rank) << s->name()->str();
      ++convs;
    }
    EXPECT_GE(convs, 2u);
    expect_same_outputs(float_outputs(run_plan(nhwc, {input})), want);
  }
}

// A ConvNeXt block over [2, 16, 6, 6]: depthwise 7x7, the model's own permute into channels
// last, LayerNorm over channels, a Linear-GELU-Linear MLP (MatMul + Add), the permute back, a
// per-channel layer scale and the residual Add, then a 1x1 conv. The layout pass turns both
// permutes into views of the NHWC tensors (no Transpose but the input's and the output's) and
// the GPU plan runs the MLP's MatMuls over [N, H, W, C] as 1x1 convs; the same outputs as the
// NCHW plan.
ModelBuilder convnext_block() {
  ModelBuilder m(20);  // Gelu
  m.input("x", {2, 16, 6, 6}).output("y");
  m.random("wd", {16, 1, 7, 7}, -0.2f, 0.2f).random("bd", {16}, -0.1f, 0.1f);
  m.random("ls", {16}, 0.5f, 1.5f).random("lb", {16}, -0.1f, 0.1f);
  m.random("w1", {16, 64}, -0.3f, 0.3f).random("b1", {64}, -0.1f, 0.1f);
  m.random("w2", {64, 16}, -0.2f, 0.2f).random("b2", {16}, -0.1f, 0.1f);
  m.random("gamma", {16, 1, 1}, 0.5f, 1.f).random("wo", {8, 16, 1, 1}, -0.3f, 0.3f);
  auto& dw = m.node("Conv", {"x", "wd", "bd"}, {"d"}, "dw");
  attr(dw, "group", int64_t{16});
  attr(dw, "pads", std::vector<int64_t>{3, 3, 3, 3});
  attr(m.node("Transpose", {"d"}, {"dt"}, "to_last"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  attr(m.node("LayerNormalization", {"dt", "ls", "lb"}, {"ln"}, "norm"), "epsilon", 1e-6f);
  m.node("MatMul", {"ln", "w1"}, {"h1"}, "fc1");
  m.node("Add", {"h1", "b1"}, {"h1b"}, "fc1_bias");
  m.node("Gelu", {"h1b"}, {"g"}, "gelu");
  m.node("MatMul", {"g", "w2"}, {"h2"}, "fc2");
  m.node("Add", {"h2", "b2"}, {"h2b"}, "fc2_bias");
  attr(m.node("Transpose", {"h2b"}, {"back"}, "to_first"), "perm", std::vector<int64_t>{0, 3, 1, 2});
  m.node("Mul", {"back", "gamma"}, {"scaled"}, "layer_scale");
  m.node("Add", {"scaled", "x"}, {"res"}, "residual");
  m.node("Conv", {"res", "wo"}, {"y"}, "out");
  return m;
}

TEST(GpuLayoutOnCpuTwins, ModelPermutesAroundChannelsLastBecomeViews) {
  const std::vector<float> input = uniform_input(2 * 16 * 6 * 6, 13);
  const auto want = float_outputs(run_plan(convert_ok(convnext_block()).plan, {input}));
  const std::vector<uint8_t> nhwc =
      nhwc_cpu_plan(convnext_block().bytes(), GpuPipeline{true, true});
  size_t transposes = 0;
  for (const auto* s : *fb::GetPlan(nhwc.data())->steps())
    transposes += s->op() == fb::OpFamily::Transpose;
  EXPECT_EQ(transposes, 2u);  // x in, y out
  expect_same_outputs(float_outputs(run_plan(nhwc, {input})), want);

  ConvertOptions gpu;
  gpu.target = "h100";
  const ConvertResult r = convert_onnx(convnext_block().bytes(), "model.onnx", gpu);
  EXPECT_EQ(r.summary.gemms_as_convs, 2u);
  transposes = 0;
  for (const auto* s : *fb::GetPlan(r.plan.data())->steps())
    transposes += s->op() == fb::OpFamily::Transpose;
  EXPECT_EQ(transposes, 2u);
}

}  // namespace
}  // namespace jetplan::converter::testing

namespace jetplan::converter::testing {
namespace {

// A YOLOv5 C3 block over [2, 8, 10, 10]: cv1 and cv2 (1x1 convs with SiLU as Sigmoid * x), a
// bottleneck on cv1's output (1x1 then 3x3, each with SiLU) whose sum with cv1's output joins
// cv2's in a Concat, and cv3 over it. Fused, the 3x3 conv takes the Add as a residual after its
// activation (act(conv) + x: ConvParams residual_after_activation), and the two convs write the
// Concat in place, the residual one too (its residual stays a dense tensor): the same outputs as
// the unfused NCHW plan, whose Add is a step of its own.
ModelBuilder c3_block() {
  ModelBuilder m;
  m.input("x", {2, 8, 10, 10}).output("y");
  const auto conv_silu = [&](const std::string& in, const std::string& out, int64_t cin,
                             int64_t cout, int64_t k) {
    m.random(out + "_w", {cout, cin, k, k}, -0.4f, 0.4f).random(out + "_b", {cout}, -0.2f, 0.2f);
    auto& c = m.node("Conv", {in, out + "_w", out + "_b"}, {out + "_c"}, out);
    if (k == 3) attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
    m.node("Sigmoid", {out + "_c"}, {out + "_s"}, out + "_sigmoid");
    m.node("Mul", {out + "_c", out + "_s"}, {out + "_y"}, out + "_silu");
  };
  conv_silu("x", "cv1", 8, 4, 1);
  conv_silu("cv1_y", "m_cv1", 4, 4, 1);
  conv_silu("m_cv1_y", "m_cv2", 4, 4, 3);
  m.node("Add", {"cv1_y", "m_cv2_y"}, {"m_y"}, "m_add");
  conv_silu("x", "cv2", 8, 4, 1);
  attr(m.node("Concat", {"m_y", "cv2_y"}, {"cat"}, "cat"), "axis", int64_t{1});
  conv_silu("cat", "cv3", 8, 8, 1);
  m.node("Identity", {"cv3_y"}, {"y"}, "out");
  return m;
}

TEST(GpuLayoutOnCpuTwins, ResidualAfterTheActivationWritesTheConcatInPlace) {
  const std::vector<float> input = uniform_input(2 * 8 * 10 * 10, 17);
  ConvertOptions unfused;
  unfused.fuse = false;
  const auto want = float_outputs(run_plan(convert_ok(c3_block(), unfused).plan, {input}));
  // The NCHW plan, fused: the CPU twin's residual after the activation.
  const ConvertResult fused = convert_ok(c3_block());
  const fb::Step* bottleneck = nullptr;
  for (const auto* s : *plan_of(fused)->steps())
    if (s->op() == fb::OpFamily::Conv && s->params_as_ConvParams()->has_residual()) bottleneck = s;
  ASSERT_NE(bottleneck, nullptr) << "the Add did not join the 3x3 conv";
  EXPECT_EQ(bottleneck->name()->str().rfind("m_cv2", 0), 0u) << bottleneck->name()->str();
  EXPECT_TRUE(bottleneck->params_as_ConvParams()->residual_after_activation());
  EXPECT_EQ(bottleneck->params_as_ConvParams()->activation()->kind(), fb::ActivationKind::Silu);
  EXPECT_EQ(count_steps(plan_of(fused), fb::OpFamily::Binary), 0u);
  expect_same_outputs(float_outputs(run_plan(fused.plan, {input})), want);
  // Channels last, as a GPU plan: no Concat step left; the residual conv writes channels 0-3.
  const std::vector<uint8_t> nhwc = nhwc_cpu_plan(c3_block().bytes(), GpuPipeline{true, true});
  const fb::Plan* plan = fb::GetPlan(nhwc.data());
  EXPECT_EQ(count_steps(plan, fb::OpFamily::Concat), 0u);
  size_t in_place_residuals = 0;
  for (const auto* s : *plan->steps()) {
    const auto* p = s->params_as_ConvParams();
    if (p != nullptr && p->has_residual() && p->residual_after_activation()) {
      ++in_place_residuals;
      EXPECT_EQ(p->y_channel_offset(), 0);
      EXPECT_EQ(plan->tensors()->Get(s->outputs()->Get(0))->shape()->Get(3), 8);
    }
  }
  EXPECT_EQ(in_place_residuals, 1u);
  expect_same_outputs(float_outputs(run_plan(nhwc, {input})), want);
}

}  // namespace
}  // namespace jetplan::converter::testing

namespace jetplan::converter::testing {
namespace {

// The GPU layout's Transpose back to channels first and the model's own compose into one
// Transpose of each head conv's NHWC output; the Sigmoid moves into the head convs
// (hoist_activations); each Transpose writes its scale's rows of the Concat's output in place
// (TransposeParams.y_block): no Concat, Copy or Activation step is left, and the outputs are
// the NCHW plan's.
TEST(GpuLayoutOnCpuTwins, HeadPermutesOfNhwcConvOutputsComposeIntoOneTranspose) {
  const std::vector<float> input = uniform_input(2 * 6 * 8 * 8, 19);
  const auto want = float_outputs(run_plan(convert_ok(gpu_detect_head()).plan, {input}));
  const std::vector<uint8_t> nhwc =
      nhwc_cpu_plan(gpu_detect_head().bytes(), GpuPipeline{true, true});
  const fb::Plan* plan = fb::GetPlan(nhwc.data());
  // x into NHWC, then one Transpose a head (two before: back to NCHW, then the model's).
  std::vector<std::vector<int32_t>> perms;
  std::vector<std::vector<int64_t>> blocks;  // y_block, y_block_stride, y_offset
  int convs_with_sigmoid = 0;
  for (const auto* s : *plan->steps()) {
    EXPECT_NE(s->op(), fb::OpFamily::Concat) << s->name()->str();
    EXPECT_NE(s->op(), fb::OpFamily::Activation) << s->name()->str();
    EXPECT_NE(s->op(), fb::OpFamily::Copy) << s->name()->str();
    if (s->op() == fb::OpFamily::Conv) {
      const auto* a = s->params_as_ConvParams()->activation();
      convs_with_sigmoid += a != nullptr && a->kind() == fb::ActivationKind::Sigmoid;
    }
    if (s->op() == fb::OpFamily::Transpose) {
      const auto* p = s->params_as_TransposeParams();
      perms.emplace_back(p->perm()->begin(), p->perm()->end());
      blocks.push_back({p->y_block(), p->y_block_stride(), p->y_offset()});
    }
  }
  EXPECT_EQ(convs_with_sigmoid, 2);
  ASSERT_EQ(perms.size(), 3u);
  EXPECT_EQ(perms[1], (std::vector<int32_t>{0, 3, 1, 2, 4}));
  EXPECT_EQ(perms[2], (std::vector<int32_t>{0, 3, 1, 2, 4}));
  // y [2, 3 * 64 + 3 * 16, 4]: scale 0's 768 values a batch at 0, scale 1's 192 after them.
  EXPECT_EQ(blocks[0], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(blocks[1], (std::vector<int64_t>{768, 960, 0}));
  EXPECT_EQ(blocks[2], (std::vector<int64_t>{192, 960, 768}));
  expect_same_outputs(float_outputs(run_plan(nhwc, {input})), want);
}

}  // namespace
}  // namespace jetplan::converter::testing

namespace jetplan::converter::testing {
namespace {

// A PAN neck's Concats in place: the Resize writes its channels of the top-down Concat
// (ResizeParams.y_axis, y_axis_offset), the convs read once theirs of the bottom-up one, and the
// feature maps that other steps read too are copied into their blocks by identity Transposes
// (y_block) where the Concats were: no Concat step is left, and the outputs are the NCHW plan's.
TEST(GpuLayoutOnCpuTwins, NeckConcatsAreWrittenInPlaceWhereTheirProducersCan) {
  const std::vector<float> input = uniform_input(2 * 8 * 8 * 8, 23);
  const auto want = float_outputs(run_plan(convert_ok(gpu_pan_neck()).plan, {input}));
  const std::vector<uint8_t> nhwc = nhwc_cpu_plan(gpu_pan_neck().bytes(), GpuPipeline{true, true});
  const fb::Plan* plan = fb::GetPlan(nhwc.data());
  std::vector<std::vector<int64_t>> copies;  // identity Transposes: y_block, stride, offset
  std::vector<std::pair<int32_t, int64_t>> resizes;  // y_axis, y_axis_offset
  std::map<std::string, int64_t> conv_offsets;       // the convs writing a Concat in place
  for (const auto* s : *plan->steps()) {
    const std::string name = s->name()->str();
    EXPECT_NE(s->op(), fb::OpFamily::Concat) << name;
    if (s->op() == fb::OpFamily::Resize) {
      const auto* p = s->params_as_ResizeParams();
      resizes.emplace_back(p->y_axis(), p->y_axis_offset());
    }
    if (s->op() == fb::OpFamily::Conv && name.find("+cat_") != std::string::npos)
      conv_offsets[name.substr(0, name.find('+'))] =
          s->params_as_ConvParams()->y_channel_offset();
    if (s->op() == fb::OpFamily::Transpose && s->params_as_TransposeParams()->y_block() != 0) {
      const auto* p = s->params_as_TransposeParams();
      const std::vector<int32_t> perm(p->perm()->begin(), p->perm()->end());
      EXPECT_EQ(perm, (std::vector<int32_t>{0, 1, 2, 3})) << name;
      copies.push_back({p->y_block(), p->y_block_stride(), p->y_offset()});
    }
  }
  // cat_td [2, 8, 8, 16] NHWC: up's 8 channels at 0 (the Resize), c0's 8 after (copied);
  // cat_bu [2, 4, 4, 20]: down's 8 at 0, red's 8 at 8 (copied), skip's 4 at 16.
  EXPECT_EQ(resizes, (std::vector<std::pair<int32_t, int64_t>>{{3, 0}}));
  EXPECT_EQ(copies, (std::vector<std::vector<int64_t>>{{8, 16, 8}, {8, 20, 8}}));
  EXPECT_EQ(conv_offsets, (std::map<std::string, int64_t>{{"down", 0}, {"skip", 16}}));
  expect_same_outputs(float_outputs(run_plan(nhwc, {input})), want);
}

}  // namespace
}  // namespace jetplan::converter::testing
