// Pointwise chain fusion (converter/src/passes/fuse_pointwise.cc): which chains become one Pointwise
// step, which stay apart (intermediates read twice or graph outputs, lone nodes, the kernel's
// limits), and by numbers: every fused plan runs on the CPU backend and must give the outputs of
// the plan converted without fusion (--no-fuse), on fresh random inputs. GPU plans: the
// Pointwise step gets a CUDA kernel, and runs NHWC next to NHWC producers (checked by numbers
// on the CPU twins, which ignore the layout of elementwise steps).
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <random>

#include "converter/src/lower/gpu_lower.h"
#include "converter/src/import/onnx_import.h"
#include "converter/src/passes/passes.h"
#include "converter/src/ops/check.h"
#include "kernels/cuda/select.h"
#include "tests/converter/util/plan_runner.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/gpu_pipeline.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;

// Random inputs of the given sizes (a fresh seed each run, printed on failure).
std::vector<std::vector<float>> random_inputs(const std::vector<size_t>& sizes) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<std::vector<float>> in;
  for (size_t n : sizes) {
    in.emplace_back(n);
    for (float& v : in.back()) v = dist(rng);
  }
  return in;
}

void expect_same_outputs(const std::vector<std::vector<float>>& got,
                         const std::vector<std::vector<float>>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << "output " << o;
    for (size_t i = 0; i < want[o].size(); ++i)
      ASSERT_NEAR(got[o][i], want[o][i], 1e-5f + 1e-5f * std::fabs(want[o][i]))
          << "output " << o << " element " << i;
  }
}

// Converts with and without fusion, checks the fused plan's step families and that both plans
// compute the same outputs. Returns the fused plan.
std::vector<uint8_t> check_fusion(const ModelBuilder& m, const std::vector<size_t>& input_sizes,
                                  const std::vector<OpFamily>& fused_steps) {
  const ConvertResult fused = convert_ok(m);
  ConvertOptions no_fuse;
  no_fuse.fuse = false;
  const ConvertResult plain = convert_ok(m, no_fuse);
  const fb::Plan* plan = read_plan(fused.plan);
  EXPECT_NE(plan, nullptr);
  if (plan == nullptr) return {};
  EXPECT_EQ(step_ops(plan), fused_steps);
  const auto in = random_inputs(input_sizes);
  expect_same_outputs(float_outputs(run_plan(fused.plan, in)),
                      float_outputs(run_plan(plain.plan, in)));
  // Deterministic: the same model gives the same bytes.
  EXPECT_EQ(convert_ok(m).plan, fused.plan);
  return fused.plan;
}

const fb::PointwiseParams* pointwise_of(const std::vector<uint8_t>& bytes, size_t step) {
  const fb::Plan* plan = read_plan(bytes);
  if (plan == nullptr || step >= plan->steps()->size()) return nullptr;
  return plan->steps()->Get(static_cast<flatbuffers::uoffset_t>(step))->params_as_PointwiseParams();
}

TEST(FusePointwise, DivErfAddMulMulBecomesOneStep) {
  // The erf-GELU shape with another divisor (no Gelu activation matches it).
  ModelBuilder m;
  m.input("x", {2, 8, 33}).output("y");
  m.initializer("c", {}, {1.3f}).initializer("one", {}, {1.f}).initializer("half", {}, {0.5f});
  m.node("Div", {"x", "c"}, {"d"}, "div");
  m.node("Erf", {"d"}, {"e"}, "erf");
  m.node("Add", {"e", "one"}, {"a"}, "add");
  m.node("Mul", {"x", "a"}, {"p"}, "mul");
  m.node("Mul", {"p", "half"}, {"y"}, "mul_half");
  const auto plan = check_fusion(m, {2 * 8 * 33}, {OpFamily::Pointwise});
  const fb::PointwiseParams* p = pointwise_of(plan, 0);
  ASSERT_NE(p, nullptr);
  // Loads of x (once: it is read twice), c, one, half; Div, Erf, Add, Mul, Mul.
  EXPECT_EQ(p->program()->size(), 9u);
  EXPECT_EQ(read_plan(plan)->steps()->Get(0)->inputs()->size(), 4u);
  EXPECT_EQ(read_plan(plan)->steps()->Get(0)->name()->str(), "div+erf+add+mul+mul_half");
}

TEST(FusePointwise, SigmoidMulAddBecomesOneStep) {
  ModelBuilder m;
  m.input("x", {1, 16, 5, 5}).input("g", {1, 16, 5, 5}).output("y");
  m.random("bias", {1, 16, 1, 1});
  m.node("Sigmoid", {"x"}, {"s"}, "sig");
  m.node("Mul", {"s", "g"}, {"p"}, "mul");
  m.node("Add", {"p", "bias"}, {"y"}, "add");
  check_fusion(m, {400, 400}, {OpFamily::Pointwise});
}

TEST(FusePointwise, PerChannelConstantAndSecondInput) {
  // relu(x * scale[c] + r) then Tanh and a Sub of a scalar: scale broadcasts per channel, r is
  // a second run-time input; Add + Relu was one Binary step (fuse), the chain now one step.
  ModelBuilder m;
  m.input("x", {2, 6, 4, 3}).input("r", {2, 6, 4, 3}).output("y");
  m.random("scale", {6, 1, 1}, 0.5f, 1.5f).initializer("k", {1}, {0.25f});
  m.node("Mul", {"x", "scale"}, {"a"}, "mul");
  m.node("Add", {"a", "r"}, {"b"}, "add");
  m.node("Relu", {"b"}, {"c"}, "relu");
  m.node("Tanh", {"c"}, {"t"}, "tanh");
  m.node("Sub", {"t", "k"}, {"y"}, "sub");
  const auto plan = check_fusion(m, {144, 144}, {OpFamily::Pointwise});
  EXPECT_EQ(read_plan(plan)->steps()->Get(0)->inputs()->size(), 4u);  // x, scale, r, k
}

TEST(FusePointwise, SharedIntermediatesAndGraphOutputsStayApart) {
  // a is read twice: it stays a tensor of its own (Mul with the fused Sigmoid), the Add reads
  // it; s is a graph output: Sigmoid(a) is written, then Abs(s) + a is one more chain.
  ModelBuilder m;
  m.input("x", {3, 7}).output("s").output("y");
  m.initializer("two", {}, {2.f});
  m.node("Mul", {"x", "two"}, {"a"}, "mul");
  m.node("Sigmoid", {"a"}, {"s"}, "sig");
  m.node("Abs", {"s"}, {"b"}, "abs");
  m.node("Add", {"b", "a"}, {"c"}, "add");
  m.node("Neg", {"c"}, {"y"}, "neg");
  check_fusion(m, {21}, {OpFamily::Binary, OpFamily::Activation, OpFamily::Pointwise});
}

TEST(FusePointwise, LoneNodesAndSmallerIntermediatesStayAsTheyAre) {
  // The Add alone stays a Binary step. The Sigmoid of the [N, C, 1, 1] gate is not recomputed
  // per element: it stays its own step, the Mul by the gate and the Neg after it fuse.
  ModelBuilder m;
  m.input("x", {2, 4, 3, 3}).input("g", {2, 4, 1, 1}).output("y").output("z");
  m.initializer("one", {}, {1.f});
  m.node("Add", {"x", "one"}, {"y"}, "add");
  m.node("Sigmoid", {"g"}, {"s"}, "sig");
  m.node("Mul", {"x", "s"}, {"p"}, "mul");
  m.node("Neg", {"p"}, {"z"}, "neg");
  check_fusion(m, {72, 8},
               {OpFamily::Binary, OpFamily::Activation, OpFamily::Pointwise});
}

TEST(FusePointwise, LongChainsSplitAtTheKernelLimits) {
  // y = ((x0 + x1) + x2) + ... + x9: 10 inputs and 19 instructions do not fit one program
  // (8 inputs, 16 instructions); every step stays within both.
  ModelBuilder m;
  std::vector<size_t> sizes;
  for (int i = 0; i < 10; ++i) {
    m.input("x" + std::to_string(i), {5, 3});
    sizes.push_back(15);
  }
  m.output("y");
  std::string acc = "x0";
  for (int i = 1; i < 10; ++i) {
    const std::string out = i == 9 ? "y" : "s" + std::to_string(i);
    m.node("Add", {acc, "x" + std::to_string(i)}, {out}, "add" + std::to_string(i));
    acc = out;
  }
  const auto plan = check_fusion(m, sizes, {OpFamily::Pointwise, OpFamily::Pointwise});
  for (size_t s = 0; s < 2; ++s) {
    const fb::PointwiseParams* p = pointwise_of(plan, s);
    ASSERT_NE(p, nullptr);
    EXPECT_LE(p->program()->size(), 16u);
    EXPECT_LE(read_plan(plan)->steps()->Get(static_cast<uint32_t>(s))->inputs()->size(), 8u);
  }
}

// ------------------------------------------------------------------------------- GPU plans

// An NHWC producer (Conv) feeding a chain with a per-channel constant, an [N, C, 1, 1] run-time
// gate (global pooling), a second NHWC tensor (Conv + Relu, also a graph output) and a scalar.
ModelBuilder nhwc_chain() {
  ModelBuilder m;
  m.input("x", {2, 3, 8, 8}).output("y").output("d");
  m.random("w1", {8, 3, 3, 3}, -0.4f, 0.4f).random("w2", {8, 3, 3, 3}, -0.4f, 0.4f);
  m.random("chan", {8, 1, 1}, 0.5f, 1.5f).initializer("k", {}, {0.5f});
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  attr(m.node("Conv", {"x", "w1"}, {"c"}, "conv1"), "pads", pads);
  attr(m.node("Conv", {"x", "w2"}, {"d0"}, "conv2"), "pads", pads);
  // d, a graph output too, keeps fuse() from taking add_d into conv2 as its residual.
  m.node("Relu", {"d0"}, {"d"}, "relu2");
  m.node("GlobalAveragePool", {"c"}, {"g"}, "gap");
  m.node("Mul", {"c", "chan"}, {"a"}, "mul_chan");
  m.node("Add", {"a", "d"}, {"b"}, "add_d");
  m.node("Mul", {"b", "g"}, {"e"}, "mul_gate");
  m.node("Sigmoid", {"e"}, {"f"}, "sig");
  m.node("Sub", {"f", "k"}, {"y"}, "sub_k");
  return m;
}

TEST(FusePointwiseGpu, StepGetsACudaKernel) {
  ConvertOptions o;
  o.target = "orin-agx";
  const ConvertResult r = convert_onnx(nhwc_chain().bytes(), "model.onnx", o);
  const fb::Plan* plan = read_plan(r.plan);
  ASSERT_NE(plan, nullptr);
  int pointwise = 0;
  for (const auto* s : *plan->steps()) {
    if (s->op() != OpFamily::Pointwise) continue;
    ++pointwise;
    EXPECT_EQ(s->inputs()->size(), 5u);
    EXPECT_EQ(s->kernel()->str(), "jp_pointwise_chain_f16_x8");  // C = 8 innermost (NHWC)
    const fb::Tensor* y = plan->tensors()->Get(s->outputs()->Get(0));
    EXPECT_EQ(y->layout(), fb::Layout::NHWC);
    EXPECT_EQ(y->dtype(), fb::DType::Float16);
    for (uint32_t i : *s->inputs()) {
      const fb::Tensor* t = plan->tensors()->Get(i);
      const auto* shape = t->shape();
      // Run-time inputs NHWC; constants per channel as [1, 1, 1, C] or scalars.
      if (t->storage() == fb::Storage::Weight)
        EXPECT_TRUE(shape->size() == 0 || shape->Get(shape->size() - 1) == 8 ||
                    t->size_bytes() == 2)
            << t->name()->str();
      else
        EXPECT_EQ(t->layout(), fb::Layout::NHWC) << t->name()->str();
    }
  }
  EXPECT_EQ(pointwise, 1);
}

TEST(FusePointwiseGpu, NhwcLayoutGivesTheNchwOutputs) {
  const std::vector<uint8_t> nhwc = nhwc_cpu_plan(nhwc_chain().bytes(), GpuPipeline{true, true});
  const fb::Plan* plan = read_plan(nhwc);
  ASSERT_NE(plan, nullptr);
  size_t transposes = 0, nhwc_pointwise = 0;
  for (const auto* s : *plan->steps()) {
    transposes += s->op() == OpFamily::Transpose;
    nhwc_pointwise += s->op() == OpFamily::Pointwise &&
                      plan->tensors()->Get(s->outputs()->Get(0))->layout() == fb::Layout::NHWC;
  }
  EXPECT_EQ(nhwc_pointwise, 1u);
  EXPECT_EQ(transposes, 3u);  // x into NHWC, y and d back to NCHW
  ConvertOptions no_fuse;
  no_fuse.fuse = false;
  const auto in = random_inputs({2 * 3 * 8 * 8});
  const auto want = float_outputs(run_plan(convert_ok(nhwc_chain(), no_fuse).plan, in));
  const auto got = float_outputs(run_plan(nhwc, in));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want[0].size(); ++i)
    ASSERT_NEAR(got[0][i], want[0][i], 1e-4f + 1e-4f * std::fabs(want[0][i])) << i;
}

}  // namespace
}  // namespace jetplan::converter::testing
