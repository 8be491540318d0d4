// fuse_patterns (converter/src/passes/fuse_patterns.cc) and view aliasing (alias_views): exporters'
// spellings of SiLU, erf-GELU and a scaled MatMul operand become one step, and reshapes become
// views. Each fused plan runs on the CPU backend against the same model converted with
// --no-fuse (every node its own step) on fresh random inputs.
#include <gmock/gmock.h>

#include <cmath>
#include <vector>

#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;

// The model's single output from the fused plan and from the --no-fuse plan on the same
// random input (float32, `count` elements); they must agree to float32 rounding.
void expect_same_as_unfused(const ModelBuilder& m, size_t count, uint32_t seed) {
  ConvertOptions unfused;
  unfused.fuse = false;
  const ConvertResult a = convert_ok(m), b = convert_ok(m, unfused);
  expect_contract(a.plan);
  const std::vector<float> x = random_floats(count, seed, -3.f, 3.f);
  const auto fused_out = run(a.plan, {bytes_of(x)});
  const auto plain_out = run(b.plan, {bytes_of(x)});
  ASSERT_EQ(fused_out.size(), 1u);
  ASSERT_EQ(plain_out.size(), 1u);
  const std::vector<float> got = values_of<float>(fused_out[0]);
  const std::vector<float> want = values_of<float>(plain_out[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_FALSE(std::isnan(got[i])) << i;
    ASSERT_NEAR(got[i], want[i], 2e-5f * (1.f + std::fabs(want[i]))) << "element " << i;
  }
}

TEST(FusePatterns, SigmoidTimesInputBecomesSiluInTheConv) {
  ModelBuilder m;
  m.input("x", {1, 3, 6, 5}).output("y");
  m.random("w", {4, 3, 3, 3}).random("b", {4});
  attr(m.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Sigmoid", {"c"}, {"s"}, "sig");
  m.node("Mul", {"s", "c"}, {"y"}, "mul");  // the sigmoid on either side
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Conv));
  EXPECT_EQ(plan->steps()->Get(0)->name()->str(), "conv+sig+mul");
  EXPECT_EQ(plan->steps()->Get(0)->params_as_ConvParams()->activation()->kind(),
            fb::ActivationKind::Silu);
  expect_same_as_unfused(m, 3 * 6 * 5, 1);
}

TEST(FusePatterns, SiluNeedsTheSameInputOnBothSides) {
  ModelBuilder m;
  m.input("x", {2, 8}).input("z", {2, 8}).output("y");
  m.node("Sigmoid", {"x"}, {"s"}, "sig");
  m.node("Mul", {"s", "z"}, {"y"}, "gate");  // a gate, not SiLU: a Pointwise chain
  const ConvertResult r = convert_ok(m);
  EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Pointwise));
}

// MatMul + bias, then GELU as torch exports it: x/sqrt2 -> Erf -> +1 -> *x -> *0.5, or with
// the products the other way round (x*0.5 first) and x*(1/sqrt2) for the division.
ModelBuilder gelu_mlp(bool half_first) {
  ModelBuilder m;
  m.input("x", {5, 12}).output("y");
  m.random("w", {12, 16}).random("bias", {16});
  m.initializer("sqrt2", {}, {1.41421356f}).initializer("inv_sqrt2", {}, {0.70710678f});
  m.initializer("one", {}, {1.f}).initializer("half", {}, {0.5f});
  m.node("MatMul", {"x", "w"}, {"mm"}, "fc");
  m.node("Add", {"mm", "bias"}, {"h"}, "bias_add");
  if (half_first) {
    m.node("Mul", {"h", "inv_sqrt2"}, {"d"}, "scale");
    m.node("Erf", {"d"}, {"e"}, "erf");
    m.node("Add", {"one", "e"}, {"e1"}, "add1");
    m.node("Mul", {"half", "h"}, {"hh"}, "halve");
    m.node("Mul", {"hh", "e1"}, {"y"}, "mul");
  } else {
    m.node("Div", {"h", "sqrt2"}, {"d"}, "scale");
    m.node("Erf", {"d"}, {"e"}, "erf");
    m.node("Add", {"e", "one"}, {"e1"}, "add1");
    m.node("Mul", {"h", "e1"}, {"p"}, "mul");
    m.node("Mul", {"p", "half"}, {"y"}, "halve");
  }
  return m;
}

TEST(FusePatterns, ErfGeluBecomesTheGemmActivation) {
  for (bool half_first : {false, true}) {
    const ModelBuilder m = gelu_mlp(half_first);
    const ConvertResult r = convert_ok(m);
    const fb::Plan* plan = plan_of(r);
    ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm)) << half_first;
    const auto* p = plan->steps()->Get(0)->params_as_GemmParams();
    EXPECT_TRUE(p->has_c());
    EXPECT_EQ(p->activation()->kind(), fb::ActivationKind::Gelu);
    expect_same_as_unfused(m, 5 * 12, 2 + half_first);
  }
}

TEST(FusePatterns, GeluConstantsMustMatch) {
  ModelBuilder m;
  m.input("x", {4, 6}).output("y");
  m.initializer("c", {}, {1.5f}).initializer("one", {}, {1.f}).initializer("half", {}, {0.5f});
  m.node("Div", {"x", "c"}, {"d"}, "scale");  // not sqrt(2): no GELU
  m.node("Erf", {"d"}, {"e"}, "erf");
  m.node("Add", {"e", "one"}, {"e1"}, "add1");
  m.node("Mul", {"x", "e1"}, {"p"}, "mul");
  m.node("Mul", {"p", "half"}, {"y"}, "halve");
  const ConvertResult r = convert_ok(m);
  EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Pointwise));  // the chain, as it is
  expect_same_as_unfused(m, 4 * 6, 4);
}

// Attention's scaled keys: k / 8 -> Transpose -> MatMul(q, .) is MatMul(q, Transpose(k)) with
// alpha 1/8; the Reshape between is a view.
TEST(FusePatterns, ScalarScaleMovesIntoTheGemmAlpha) {
  ModelBuilder m;
  m.input("x", {2, 6, 8}).output("y");
  m.random("q", {2, 5, 8});
  m.initializer("eight", {}, {8.f});
  m.initializer_i64("shape", {3}, {2, 8, 6});
  m.node("Div", {"x", "eight"}, {"k"}, "scale");
  attr(m.node("Transpose", {"k"}, {"kt"}, "kt"), "perm", std::vector<int64_t>{0, 2, 1});
  m.node("Reshape", {"kt", "shape"}, {"kr"}, "reshape");
  m.node("MatMul", {"q", "kr"}, {"y"}, "scores");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Transpose, OpFamily::Gemm));
  const fb::Step* gemm = plan->steps()->Get(1);
  EXPECT_EQ(gemm->name()->str(), "scale+scores");
  EXPECT_FLOAT_EQ(gemm->params_as_GemmParams()->alpha(), 0.125f);
  // The Gemm reads the Reshape's view of the Transpose output.
  const fb::Tensor* b = plan->tensors()->Get(gemm->inputs()->Get(1));
  EXPECT_EQ(b->view_of(), static_cast<int32_t>(plan->steps()->Get(0)->outputs()->Get(0)));
  expect_same_as_unfused(m, 2 * 6 * 8, 5);
}

TEST(FusePatterns, ScaleStaysWhenTheScaledValueHasAnotherReader) {
  ModelBuilder m;
  m.input("x", {3, 4}).output("y").output("k");
  m.random("w", {4, 2});
  m.initializer("s", {}, {0.5f});
  m.node("Mul", {"s", "x"}, {"k"}, "scale");
  m.node("MatMul", {"k", "w"}, {"y"}, "mm");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Binary, OpFamily::Gemm));
  EXPECT_FLOAT_EQ(plan->steps()->Get(1)->params_as_GemmParams()->alpha(), 1.f);
}

TEST(FusePatterns, TransposesInARowBecomeOne) {
  ModelBuilder m;
  m.input("x", {2, 3, 4, 5}).output("y");
  m.random("w", {3, 6});
  m.node("Relu", {"x"}, {"r"}, "relu");
  attr(m.node("Transpose", {"r"}, {"t1"}, "t1"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  attr(m.node("Transpose", {"t1"}, {"t2"}, "t2"), "perm", std::vector<int64_t>{0, 3, 1, 2});
  m.node("MatMul", {"t2", "w"}, {"y"}, "mm");  // [2, 5, 4, 3] x [3, 6]
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan),
              ElementsAre(OpFamily::Activation, OpFamily::Transpose, OpFamily::Gemm));
  const auto* perm = plan->steps()->Get(1)->params_as_TransposeParams()->perm();
  EXPECT_EQ(std::vector<int64_t>(perm->begin(), perm->end()), (std::vector<int64_t>{0, 3, 2, 1}));
  expect_same_as_unfused(m, 2 * 3 * 4 * 5, 7);
}

TEST(FusePatterns, TransposesThatUndoEachOtherLeaveAView) {
  ModelBuilder m;
  m.input("x", {2, 3, 4}).output("y");
  m.random("w", {4, 2});
  m.node("Relu", {"x"}, {"r"}, "relu");
  attr(m.node("Transpose", {"r"}, {"t1"}, "t1"), "perm", std::vector<int64_t>{2, 0, 1});
  attr(m.node("Transpose", {"t1"}, {"t2"}, "t2"), "perm", std::vector<int64_t>{1, 2, 0});
  m.node("MatMul", {"t2", "w"}, {"y"}, "mm");
  const ConvertResult r = convert_ok(m);
  EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Activation, OpFamily::Gemm));
  expect_same_as_unfused(m, 2 * 3 * 4, 8);
}

// torch's attention out-projection: Gemm [S, D] + bias -> Reshape [S, 1, D] -> Transpose to
// [1, S, D] -> Add(residual). The reshapes move above the Gemm (views of A), so the Add meets
// the Gemm and becomes its residual: one step.
TEST(FusePatterns, ReshapesAfterAGemmMoveToItsInput) {
  ModelBuilder m;
  m.input("x", {1, 6, 8}).output("y");
  m.random("w", {8, 8}).random("b", {8});
  m.initializer_i64("flat", {2}, {6, 8}).initializer_i64("unflat", {3}, {6, 1, 8});
  m.node("Relu", {"x"}, {"r"}, "relu");  // A in the arena: a view needs bytes of the plan's own
  m.node("Reshape", {"r", "flat"}, {"x2"}, "flatten");
  attr(m.node("Gemm", {"x2", "w", "b"}, {"g"}, "out_proj"), "transB", int64_t{1});
  m.node("Reshape", {"g", "unflat"}, {"g3"}, "unflatten");
  attr(m.node("Transpose", {"g3"}, {"gt"}, "to_batch_first"), "perm",
       std::vector<int64_t>{1, 0, 2});
  m.node("Add", {"gt", "x"}, {"y"}, "residual");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Activation, OpFamily::Gemm));
  const auto* p = plan->steps()->Get(1)->params_as_GemmParams();
  EXPECT_TRUE(p->has_c());
  EXPECT_TRUE(p->has_residual());
  EXPECT_EQ(tensor_shape(plan, plan->steps()->Get(1)->outputs()->Get(0)), (Shape{1, 6, 8}));
  expect_same_as_unfused(m, 6 * 8, 9);
}

// Transposes that move only extent-1 dims keep every byte in place: views, no step.
TEST(Views, UnitDimTransposesAndReshapesAreViews) {
  ModelBuilder m;
  m.input("x", {1, 5, 7}).output("y");
  m.random("w", {7, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  attr(m.node("Transpose", {"r"}, {"t"}, "swap_unit"), "perm", std::vector<int64_t>{1, 0, 2});
  m.node("MatMul", {"t", "w"}, {"y"}, "mm");  // [5, 1, 7] x [7, 3]
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Activation, OpFamily::Gemm));
  const fb::Tensor* a = plan->tensors()->Get(plan->steps()->Get(1)->inputs()->Get(0));
  EXPECT_EQ(a->view_of(), static_cast<int32_t>(plan->steps()->Get(0)->outputs()->Get(0)));
  expect_same_as_unfused(m, 5 * 7, 6);
}

// A reshape of a graph input or into a graph output stays a Copy: bindings have their own bytes.
TEST(Views, BindingsAreNeverViews) {
  ModelBuilder m;
  m.input("x", {2, 6}).output("y");
  m.initializer_i64("shape", {2}, {3, 4});
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Copy));
  for (const fb::Tensor* t : *plan->tensors()) EXPECT_EQ(t->view_of(), -1);
}

}  // namespace
}  // namespace jetplan::converter::testing
