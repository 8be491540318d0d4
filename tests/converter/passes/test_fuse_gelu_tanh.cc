// The tanh form of GELU (converter/src/passes/fuse_patterns.cc gelu_tanh, ops/unary.cc): ONNX's
// Gelu(approximate="tanh") and the chains PyTorch's exporters write for it (GPT-2's
// NewGELUActivation, F.gelu(approximate="tanh") through TorchScript and dynamo) become one
// Activation GeluTanh, which fuses into the Gemm before it (the CPU plan) or the 1x1 conv a GPU
// plan runs the Gemm as. Each fused CPU plan runs against the same model converted with
// --no-fuse (every node its own step, the chain computed op by op) on random inputs.
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;

// How a model writes the GELU of h.
enum class Form {
  kGpt2,        // transformers' NewGELUActivation, as torch.onnx (TorchScript) writes it
  kTorchScript, // F.gelu(approximate="tanh") below opset 20: x * (x * x), 0.5 * (x * (1 + t))
  kDynamo,      // torchlib's decomposition: Pow(x, 3), (x * (1 + t)) * 0.5
  kSquareFirst, // (x * x) * x, every operand the other way round, (t1 * 0.5) * x
  kOnnxGelu,    // Gelu(approximate="tanh"), opset 20
};

// [2, 32, 16] x [16, 24] + bias (64 rows: GPU plans run it as a 1x1 conv, int8_gemm.h), then
// GELU's tanh form of the result; with_proj: then GPT-2's c_proj, [24, 16] + bias (so that the
// first Gemm writes Float16 in a GPU plan, not the Float32 output).
ModelBuilder gelu_tanh_mlp(Form form, float kappa = 0.044715f, bool with_proj = false) {
  ModelBuilder m(form == Form::kOnnxGelu ? 20 : 17);
  if (form == Form::kOnnxGelu) m.model().set_ir_version(9);
  m.input("x", {2, 32, 16}).output("y");
  m.random("w", {16, 24}, -0.6f, 0.6f).random("bias", {24}, -0.5f, 0.5f);
  m.initializer("half", {}, {0.5f}).initializer("one", {}, {1.f});
  m.initializer("three", {}, {3.f}).initializer("kappa", {}, {kappa});
  m.initializer("beta", {}, {0.7978845608f});
  m.node("MatMul", {"x", "w"}, {"mm"}, "c_fc");
  m.node("Add", {"mm", "bias"}, {"h"}, "c_fc_bias");
  const std::string y = with_proj ? "g" : "y";
  switch (form) {
    case Form::kGpt2:
      m.node("Mul", {"h", "half"}, {"hh"}, "halve");
      m.node("Pow", {"h", "three"}, {"cube"}, "pow");
      m.node("Mul", {"cube", "kappa"}, {"k"}, "kappa_mul");
      m.node("Add", {"h", "k"}, {"s"}, "sum");
      m.node("Mul", {"s", "beta"}, {"z"}, "beta_mul");
      m.node("Tanh", {"z"}, {"t"}, "tanh");
      m.node("Add", {"t", "one"}, {"t1"}, "add1");
      m.node("Mul", {"hh", "t1"}, {y}, "mul");
      break;
    case Form::kTorchScript:
      m.node("Mul", {"h", "h"}, {"sq"}, "square");
      m.node("Mul", {"h", "sq"}, {"cube"}, "cube");
      m.node("Mul", {"kappa", "cube"}, {"k"}, "kappa_mul");
      m.node("Add", {"h", "k"}, {"s"}, "sum");
      m.node("Mul", {"beta", "s"}, {"z"}, "beta_mul");
      m.node("Tanh", {"z"}, {"t"}, "tanh");
      m.node("Add", {"one", "t"}, {"t1"}, "add1");
      m.node("Mul", {"h", "t1"}, {"p"}, "mul");
      m.node("Mul", {"half", "p"}, {y}, "halve");
      break;
    case Form::kDynamo:
      m.node("Pow", {"h", "three"}, {"cube"}, "pow");
      m.node("Mul", {"kappa", "cube"}, {"k"}, "kappa_mul");
      m.node("Add", {"h", "k"}, {"s"}, "sum");
      m.node("Mul", {"beta", "s"}, {"z"}, "beta_mul");
      m.node("Tanh", {"z"}, {"t"}, "tanh");
      m.node("Add", {"t", "one"}, {"t1"}, "add1");
      m.node("Mul", {"h", "t1"}, {"p"}, "mul");
      m.node("Mul", {"p", "half"}, {y}, "halve");
      break;
    case Form::kSquareFirst:
      m.node("Mul", {"h", "h"}, {"sq"}, "square");
      m.node("Mul", {"sq", "h"}, {"cube"}, "cube");
      m.node("Mul", {"cube", "kappa"}, {"k"}, "kappa_mul");
      m.node("Add", {"k", "h"}, {"s"}, "sum");
      m.node("Mul", {"s", "beta"}, {"z"}, "beta_mul");
      m.node("Tanh", {"z"}, {"t"}, "tanh");
      m.node("Add", {"one", "t"}, {"t1"}, "add1");
      m.node("Mul", {"t1", "half"}, {"th"}, "halve");
      m.node("Mul", {"th", "h"}, {y}, "mul");
      break;
    case Form::kOnnxGelu:
      attr(m.node("Gelu", {"h"}, {y}, "gelu"), "approximate", std::string("tanh"));
      break;
  }
  if (with_proj) {
    m.random("w2", {24, 16}, -0.4f, 0.4f).random("bias2", {16}, -0.5f, 0.5f);
    m.node("MatMul", {"g", "w2"}, {"pm"}, "c_proj");
    m.node("Add", {"pm", "bias2"}, {"y"}, "c_proj_bias");
  }
  return m;
}

constexpr Form kForms[] = {Form::kGpt2, Form::kTorchScript, Form::kDynamo, Form::kSquareFirst,
                           Form::kOnnxGelu};

TEST(FuseGeluTanh, EveryFormBecomesTheGemmActivation) {
  for (Form form : kForms) {
    SCOPED_TRACE("form " + std::to_string(int(form)));
    const ModelBuilder m = gelu_tanh_mlp(form);
    const ConvertResult r = convert_ok(m);
    expect_contract(r.plan);
    const fb::Plan* plan = plan_of(r);
    ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm));
    const auto* p = plan->steps()->Get(0)->params_as_GemmParams();
    EXPECT_TRUE(p->has_c());
    EXPECT_EQ(p->activation()->kind(), fb::ActivationKind::GeluTanh);
    EXPECT_THAT(plan->steps()->Get(0)->name()->str(), HasSubstr("c_fc"));
    expect_same_as_unfused(m, {2 * 32 * 16}, 2.f);
  }
}

// The GPU plan runs c_fc as a 1x1 conv (channels last) with the GELU in its epilogue: no
// Pointwise step, no Activation step (GPT-2's MLP: c_fc, GELU, c_proj).
TEST(FuseGeluTanh, GpuPlanRunsItInTheConvEpilogue) {
  for (Form form : kForms) {
    SCOPED_TRACE("form " + std::to_string(int(form)));
    ConvertOptions gpu;
    gpu.target = "h100";
    const ConvertResult r =
        convert_onnx(gelu_tanh_mlp(form, 0.044715f, true).bytes(), "model.onnx", gpu);
    const fb::Plan* plan = fb::GetPlan(r.plan.data());
    size_t gelu_convs = 0;
    for (const auto* s : *plan->steps()) {
      EXPECT_NE(s->op(), OpFamily::Pointwise) << s->name()->str();
      EXPECT_NE(s->op(), OpFamily::Activation) << s->name()->str();
      if (s->op() == OpFamily::Conv && s->params_as_ConvParams()->activation()->kind() ==
                                           fb::ActivationKind::GeluTanh) {
        ++gelu_convs;
        EXPECT_THAT(s->name()->str(), HasSubstr("c_fc"));
      }
    }
    EXPECT_EQ(gelu_convs, 1u);
    EXPECT_GE(r.summary.gemms_as_convs, 1u);  // c_fc (c_proj: K 24, not a multiple of 16)
  }
}

TEST(FuseGeluTanh, ConstantsMustMatch) {
  // 0.05 for 0.044715: some other function, left as the exporter wrote it (one Pointwise chain
  // after the Gemm).
  const ModelBuilder m = gelu_tanh_mlp(Form::kGpt2, 0.05f);
  const ConvertResult r = convert_ok(m);
  EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Gemm, OpFamily::Pointwise));
  expect_same_as_unfused(m, {2 * 32 * 16}, 2.f);
}

TEST(FuseGeluTanh, AnIntermediateReadElsewhereStays) {
  // The Tanh's output is a graph output too: the chain cannot collapse into one activation.
  ModelBuilder m = gelu_tanh_mlp(Form::kDynamo);
  m.output("t");
  const ConvertResult r = convert_ok(m);
  for (const auto* s : *plan_of(r)->steps()) {
    if (s->op() == OpFamily::Gemm) {
      EXPECT_NE(s->params_as_GemmParams()->activation()->kind(), fb::ActivationKind::GeluTanh);
    }
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
