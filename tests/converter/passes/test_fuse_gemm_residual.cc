// Gemm residual fusion (fuse.cc): a transformer's MatMul + Add(bias) + Add(skip) [+ activation]
// becomes one Gemm step act(A x B + C + R), and runs on the CPU backend to the outputs of the
// unfused plan (--no-fuse). What must stay apart stays apart.
#include <gmock/gmock.h>

#include <cmath>
#include <random>

#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

using OpFamily = fb::OpFamily;
using Shape = std::vector<int64_t>;

// x [2, 5, 8] -> MatMul(w [8, 8]) -> Add(bias [8]) -> Add(x) [-> Relu] -> y
ModelBuilder vit_block(bool relu, bool residual_first) {
  ModelBuilder m;
  m.input("x", {2, 5, 8}).output("y");
  m.random("w", {8, 8}).random("bias", {8});
  m.node("MatMul", {"x", "w"}, {"mm"}, "fc");
  const std::string end = relu ? "s" : "y";
  if (residual_first) {
    m.node("Add", {"x", "mm"}, {"r"}, "skip");
    m.node("Add", {"r", "bias"}, {end}, "bias_add");
  } else {
    m.node("Add", {"mm", "bias"}, {"b"}, "bias_add");
    m.node("Add", {"b", "x"}, {end}, "skip");
  }
  if (relu) m.node("Relu", {"s"}, {"y"}, "relu");
  return m;
}

TEST(GemmResidual, MatMulBiasSkipActivationIsOneStep) {
  for (bool relu : {false, true})
    for (bool residual_first : {false, true}) {
      SCOPED_TRACE(std::string("relu ") + (relu ? "1" : "0") + " residual first " +
                   (residual_first ? "1" : "0"));
      const ModelBuilder m = vit_block(relu, residual_first);
      const ConvertResult r = convert_ok(m);
      const fb::Plan* plan = plan_of(r);
      ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm));
      const fb::Step* s = plan->steps()->Get(0);
      const auto* p = s->params_as_GemmParams();
      EXPECT_TRUE(p->has_c());
      EXPECT_TRUE(p->has_residual());
      EXPECT_EQ(p->activation()->kind(), relu ? fb::ActivationKind::Relu : fb::ActivationKind::None);
      ASSERT_EQ(s->inputs()->size(), 4u);
      EXPECT_EQ(s->inputs()->Get(3), plan->inputs()->Get(0)->tensor());  // R is x
      EXPECT_EQ(tensor_shape(plan, s->inputs()->Get(2)), (Shape{8}));
      expect_same_as_unfused(m, {2 * 5 * 8});
    }
}

// ONNX Gemm with its C, then a skip connection from another input, then a Sigmoid.
TEST(GemmResidual, GemmWithCAndRuntimeSkip) {
  ModelBuilder m;
  m.input("x", {3, 6}).input("skip", {3, 4}).output("y");
  m.random("w", {4, 6}).random("c", {4});
  attr(m.node("Gemm", {"x", "w", "c"}, {"g"}, "fc"), "transB", int64_t{1});
  m.node("Add", {"skip", "g"}, {"s"}, "add");
  m.node("Sigmoid", {"s"}, {"y"}, "sigmoid");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm));
  EXPECT_EQ(plan->steps()->Get(0)->name()->str(), "fc+add+sigmoid");
  EXPECT_TRUE(plan->steps()->Get(0)->params_as_GemmParams()->has_residual());
  expect_same_as_unfused(m, {3 * 6, 3 * 4});
}

// Without a bias the skip is the residual, and a bias Add after it still becomes C.
TEST(GemmResidual, SkipThenBiasWithoutC) {
  ModelBuilder m;
  m.input("x", {4, 8}).output("y");
  m.random("w", {8, 8}).random("bias", {8});
  m.node("MatMul", {"x", "w"}, {"mm"}, "fc");
  m.node("Add", {"mm", "x"}, {"r"}, "skip");
  m.node("Add", {"r", "bias"}, {"y"}, "bias_add");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm));
  const auto* p = plan->steps()->Get(0)->params_as_GemmParams();
  EXPECT_TRUE(p->has_c());
  EXPECT_TRUE(p->has_residual());
  expect_same_as_unfused(m, {4 * 8});
}

// For a GPU target the fused step reads the FP16 twin of x as A and as R, and (being the last
// step, writing the float32 output) runs an _f32out kernel: no Cast after it.
TEST(GemmResidual, GpuPlanKeepsTheResidualAndWritesFloat32) {
  ConvertOptions gpu;
  gpu.target = "h100";
  const ConvertResult r = convert_onnx(vit_block(true, false).bytes(), "model.onnx", gpu);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Cast, OpFamily::Gemm));
  const fb::Step* s = plan->steps()->Get(1);
  EXPECT_EQ(s->name()->str(), "fc+bias_add+skip+relu");
  ASSERT_TRUE(s->params_as_GemmParams()->has_residual());
  ASSERT_EQ(s->inputs()->size(), 4u);
  EXPECT_EQ(s->inputs()->Get(3), s->inputs()->Get(0));  // x:f16, as A and as R
  EXPECT_EQ(plan->tensors()->Get(s->inputs()->Get(3))->dtype(), fb::DType::Float16);
  EXPECT_EQ(s->outputs()->Get(0), plan->outputs()->Get(0)->tensor());
  EXPECT_EQ(plan->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Float32);
  EXPECT_EQ(s->kernel()->str(), "jp_gemm_f16_mma32_nn_f32out");
}

TEST(GemmResidual, WhatStaysApart) {
  // A broadcasting run-time addend when C is taken; a Sub; an Add after the Gemm's activation.
  // (A second full-shape addend after R is taken becomes C: fc1.)
  ModelBuilder m;
  m.input("x", {4, 8}).input("z", {4, 8}).input("row", {8}).output("y1").output("y2")
      .output("y3").output("y4");
  m.random("w", {8, 8}).random("bias", {8});
  m.node("MatMul", {"x", "w"}, {"m1"}, "fc1");
  m.node("Add", {"m1", "x"}, {"a1"}, "skip1");
  m.node("Add", {"a1", "z"}, {"y1"}, "skip2");
  m.node("Gemm", {"x", "w", "bias"}, {"g2"}, "fc2");
  m.node("Add", {"g2", "row"}, {"y2"}, "row_add");  // a run-time [8]: not R, C is taken
  m.node("MatMul", {"x", "w"}, {"m3"}, "fc3");
  m.node("Sub", {"m3", "z"}, {"y3"}, "sub");
  m.node("MatMul", {"x", "w"}, {"m4"}, "fc4");
  m.node("Relu", {"m4"}, {"r4"}, "relu4");
  m.node("Add", {"r4", "z"}, {"y4"}, "after_relu");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  EXPECT_NE(find_step(plan, "fc1+skip1+skip2"), nullptr);  // x as R, z as C
  EXPECT_NE(find_step(plan, "fc2"), nullptr);
  EXPECT_NE(find_step(plan, "row_add"), nullptr);
  EXPECT_NE(find_step(plan, "sub"), nullptr);
  EXPECT_NE(find_step(plan, "fc4+relu4"), nullptr);
  EXPECT_NE(find_step(plan, "after_relu"), nullptr);
  expect_same_as_unfused(m, {4 * 8, 4 * 8, 8});
}

}  // namespace
}  // namespace jetplan::converter::testing
