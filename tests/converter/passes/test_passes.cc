// Passes: constant folding, Identity removal, BatchNorm folding (checked numerically with the
// CPU reference kernels) and epilogue fusion (and where it must not happen).
#include <gmock/gmock.h>

#include <cmath>

#include "kernels/kernels.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

using fb::OpFamily;

TEST(ConstantFolding, ShapeGatherUnsqueezeConcatReshapeChain) {
  ModelBuilder m;
  m.input("x", {2, 4, 3, 3}).output("y");
  m.random("w", {4, 4, 1, 1});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("Shape", {"c"}, {"shape"}, "shape");
  m.initializer_i64("zero", {}, {0});
  auto& gather = m.node("Gather", {"shape", "zero"}, {"batch"}, "gather");
  attr(gather, "axis", int64_t{0});
  m.initializer_i64("axes", {1}, {0});
  m.node("Unsqueeze", {"batch", "axes"}, {"batch1"}, "unsqueeze");
  auto& minus_one = m.node("Constant", {}, {"minus_one"}, "minus_one");
  attr_i64_tensor(minus_one, "value", {1}, {-1});
  auto& concat = m.node("Concat", {"batch1", "minus_one"}, {"target"}, "concat");
  attr(concat, "axis", int64_t{0});
  m.node("Reshape", {"c", "target"}, {"y"}, "reshape");

  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  EXPECT_THAT(step_ops(plan), ElementsAre(OpFamily::Conv, OpFamily::Copy));
  EXPECT_EQ(tensor_shape(plan, plan->outputs()->Get(0)->tensor()), (Shape{2, 36}));
  for (const auto* t : *plan->tensors())
    EXPECT_EQ(t->dtype(), fb::DType::Float32) << t->name()->str();
}

TEST(ConstantFolding, ArithmeticOnWeights) {
  // w = (w0 * 2 - 1) / 4 computed at conversion; the Conv reads the result as a weight.
  ModelBuilder m;
  m.input("x", {1, 1, 3, 3}).output("y");
  m.initializer("w0", {1, 1, 1, 1}, {3.f});
  m.initializer("two", {}, {2.f});
  m.initializer("one", {1}, {1.f});
  m.initializer("four", {}, {4.f});
  m.node("Mul", {"w0", "two"}, {"a"}, "mul");
  m.node("Sub", {"a", "one"}, {"b"}, "sub");
  m.node("Div", {"b", "four"}, {"w"}, "div");
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  EXPECT_THAT(weight_values(plan, plan->steps()->Get(0)->inputs()->Get(1)), ElementsAre(1.25f));
}

TEST(ConstantFolding, TransposeSliceCastOfConstants) {
  ModelBuilder m;
  m.input("x", {2, 3}).output("y");
  m.initializer("m", {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  m.node("Transpose", {"m"}, {"mt"}, "transpose");  // [4,3]
  m.initializer_i64("starts", {1}, {1});
  m.initializer_i64("ends", {1}, {100});
  m.initializer_i64("axes", {1}, {0});
  m.node("Slice", {"mt", "starts", "ends", "axes"}, {"ms"}, "slice");  // rows 1..3: [3,3]
  auto& cast = m.node("Cast", {"ms"}, {"mi"}, "to_int");
  attr(cast, "to", int64_t{onnx::TensorProto::INT32});
  auto& back = m.node("Cast", {"mi"}, {"mf"}, "to_float");
  attr(back, "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("MatMul", {"x", "mf"}, {"y"}, "matmul");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  EXPECT_THAT(weight_values(plan, plan->steps()->Get(0)->inputs()->Get(1)),
              ElementsAre(1, 5, 9, 2, 6, 10, 3, 7, 11));
}

TEST(IdentityRemoval, OutputKeepsItsName) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Identity", {"x"}, {"a"}, "id1");
  m.node("Dropout", {"a"}, {"b"}, "drop");
  m.node("Relu", {"b"}, {"c"}, "relu");
  m.node("Identity", {"c"}, {"y"}, "id2");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  EXPECT_EQ(plan->steps()->Get(0)->name()->str(), "relu");
  EXPECT_EQ(plan->steps()->Get(0)->inputs()->Get(0), plan->inputs()->Get(0)->tensor());
  EXPECT_EQ(plan->steps()->Get(0)->outputs()->Get(0), plan->outputs()->Get(0)->tensor());
}

// ---- BatchNorm folding ----

kernels::ConvParams conv_params(const Shape& x, const Shape& w, const Shape& y, int64_t groups,
                                int64_t pad) {
  kernels::ConvParams p;
  p.spatial_rank = 2;
  p.batch = x[0];
  p.in_channels = x[1];
  p.out_channels = w[0];
  p.groups = groups;
  for (int i = 0; i < 2; ++i) {
    p.in_size[i] = x[2 + i];
    p.out_size[i] = y[2 + i];
    p.kernel[i] = w[2 + i];
    p.pad_begin[i] = pad;
  }
  return p;
}

void check_batchnorm_folding(bool conv_has_bias, int64_t groups) {
  const Shape x_shape = {2, 4, 6, 5}, w_shape = {6, 4 / groups, 3, 3}, y_shape = {2, 6, 6, 5};
  const int64_t cout = 6;
  ModelBuilder m;
  m.input("x", x_shape).output("y");
  const std::vector<float> w = random_floats(6 * (4 / groups) * 9, 1, -1, 1);
  const std::vector<float> b = random_floats(cout, 2, -0.5f, 0.5f);
  const std::vector<float> scale = random_floats(cout, 3, 0.5f, 1.5f);
  const std::vector<float> shift = random_floats(cout, 4, -0.5f, 0.5f);
  const std::vector<float> mean = random_floats(cout, 5, -0.5f, 0.5f);
  const std::vector<float> var = random_floats(cout, 6, 0.1f, 2.f);
  m.initializer("w", w_shape, w);
  if (conv_has_bias) m.initializer("b", {cout}, b);
  m.initializer("scale", {cout}, scale).initializer("shift", {cout}, shift);
  m.initializer("mean", {cout}, mean).initializer("var", {cout}, var);
  auto& conv = m.node(
      "Conv",
      conv_has_bias ? std::vector<std::string>{"x", "w", "b"} : std::vector<std::string>{"x", "w"},
      {"c"}, "conv");
  attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  attr(conv, "group", groups);
  auto& bn = m.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"y"}, "bn");
  attr(bn, "epsilon", 1e-3f);

  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  const fb::Step* step = plan->steps()->Get(0);
  EXPECT_EQ(step->name()->str(), "conv+bn");
  ASSERT_EQ(step->op(), OpFamily::Conv);
  ASSERT_TRUE(step->params_as_ConvParams()->has_bias());
  const std::vector<float> folded_w = weight_values(plan, step->inputs()->Get(1));
  const std::vector<float> folded_b = weight_values(plan, step->inputs()->Get(2));

  // Reference: the unfolded conv, then BN, with the CPU kernels.
  const std::vector<float> x = random_floats(shape_count(x_shape), 7, -2, 2);
  kernels::ConvParams p = conv_params(x_shape, w_shape, y_shape, groups, 1);
  p.has_bias = conv_has_bias;
  std::vector<float> conv_out(shape_count(y_shape)), expected(conv_out.size()),
      got(conv_out.size());
  kernels::cpu::conv(p, x.data(), w.data(), conv_has_bias ? b.data() : nullptr, nullptr,
                     conv_out.data());
  kernels::BatchNormParams bp;
  bp.batch = y_shape[0];
  bp.channels = cout;
  bp.spatial = y_shape[2] * y_shape[3];
  bp.epsilon = 1e-3f;
  kernels::cpu::batch_norm(bp, conv_out.data(), scale.data(), shift.data(), mean.data(), var.data(),
                           expected.data());
  kernels::ConvParams fp = p;
  fp.has_bias = true;
  kernels::cpu::conv(fp, x.data(), folded_w.data(), folded_b.data(), nullptr, got.data());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], expected[i], 1e-5f * (1.f + std::fabs(expected[i]))) << "element " << i;
}

TEST(BatchNormFolding, MatchesConvThenBatchNorm) { check_batchnorm_folding(true, 1); }
TEST(BatchNormFolding, ConvWithoutBiasGetsOne) { check_batchnorm_folding(false, 1); }
TEST(BatchNormFolding, GroupedConv) { check_batchnorm_folding(true, 2); }

TEST(BatchNormFolding, SkippedWhenTheConvOutputHasAnotherReader) {
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("y1").output("y2");
  m.random("w", {2, 2, 1, 1});
  for (const char* p : {"s", "b", "mean", "v"}) m.random(p, {2}, 0.5f, 1.5f);
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("BatchNormalization", {"c", "s", "b", "mean", "v"}, {"y1"}, "bn");
  m.node("Sigmoid", {"c"}, {"y2"}, "other_reader");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  EXPECT_THAT(step_ops(plan),
              ElementsAre(OpFamily::Conv, OpFamily::BatchNorm, OpFamily::Activation));
}

// ---- epilogue fusion ----

ModelBuilder residual_block() {
  ModelBuilder m;
  m.input("x", {1, 4, 6, 6}).output("y");
  m.random("w", {4, 4, 3, 3});
  m.random("channel_bias", {1, 4, 1, 1});
  auto& conv = m.node("Conv", {"x", "w"}, {"c"}, "conv");
  attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Add", {"c", "channel_bias"}, {"c2"}, "bias_add");
  m.node("Add", {"x", "c2"}, {"c3"}, "residual_add");
  m.node("Relu", {"c3"}, {"y"}, "relu");
  return m;
}

TEST(Fusion, ConvBiasResidualRelu) {
  const fb::Plan* plan = nullptr;
  const ConvertResult r = convert_ok(residual_block());
  plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  const fb::Step* s = plan->steps()->Get(0);
  EXPECT_EQ(s->name()->str(), "conv+bias_add+residual_add+relu");
  const auto* p = s->params_as_ConvParams();
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->has_bias());
  EXPECT_TRUE(p->has_residual());
  EXPECT_EQ(p->activation()->kind(), fb::ActivationKind::Relu);
  ASSERT_EQ(s->inputs()->size(), 4u);
  EXPECT_EQ(s->inputs()->Get(3), plan->inputs()->Get(0)->tensor());  // the residual is x
  EXPECT_EQ(tensor_shape(plan, s->inputs()->Get(2)), (Shape{4}));
}

TEST(Fusion, NoFuseKeepsEveryNode) {
  ConvertOptions options;
  options.fuse = false;
  const ConvertResult r = convert_ok(residual_block(), options);
  EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Conv, OpFamily::Binary, OpFamily::Binary,
                                                OpFamily::Activation));
}

TEST(Fusion, SkippedWhenTheIntermediateHasAnotherReader) {
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("y1").output("y2");
  m.random("w", {2, 2, 1, 1});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("Relu", {"c"}, {"y1"}, "relu");
  m.node("Sigmoid", {"c"}, {"y2"}, "sigmoid");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  EXPECT_THAT(step_ops(plan),
              ElementsAre(OpFamily::Conv, OpFamily::Activation, OpFamily::Activation));
  EXPECT_EQ(plan->steps()->Get(0)->params_as_ConvParams()->activation()->kind(),
            fb::ActivationKind::None);
}

TEST(Fusion, SkippedWhenTheIntermediateIsAGraphOutput) {
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("c").output("y");
  m.random("w", {2, 2, 1, 1});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("Relu", {"c"}, {"y"}, "relu");
  EXPECT_THAT(step_ops(plan_of(convert_ok(m))), ElementsAre(OpFamily::Conv, OpFamily::Activation));
}

TEST(Fusion, ResidualProducedAfterTheConvMovesTheStep) {
  // The residual comes from a node after the conv in the graph: the fused step runs later.
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("y");
  m.random("w1", {2, 2, 1, 1}).random("w2", {2, 2, 1, 1});
  m.node("Conv", {"x", "w1"}, {"a"}, "conv_a");
  m.node("Conv", {"x", "w2"}, {"b"}, "conv_b");
  m.node("Add", {"b", "a"}, {"y"}, "add");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 2u);
  EXPECT_EQ(plan->steps()->Get(0)->name()->str(), "conv_b");
  EXPECT_EQ(plan->steps()->Get(1)->name()->str(), "conv_a+add");
}

TEST(Fusion, OnlyAddAndSubBecomeTheBias) {
  for (const char* op : {"Mul", "Div", "Max", "Min", "Pow"}) {
    ModelBuilder m;
    m.input("x", {1, 2, 4, 4}).output("y");
    m.random("w", {2, 2, 1, 1});
    m.random("k", {1, 2, 1, 1}, 0.5f, 2.f);
    m.node("Conv", {"x", "w"}, {"c"}, "conv");
    m.node(op, {"c", "k"}, {"y"}, "binary");
    const ConvertResult r = convert_ok(m);
    EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Conv, OpFamily::Binary)) << op;
  }
  // Sub folds only with the conv on the left: k - conv negates the conv.
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("y1").output("y2");
  m.random("w", {2, 2, 1, 1}).random("k", {2, 1, 1});
  m.node("Conv", {"x", "w"}, {"c1"}, "conv1");
  m.node("Sub", {"c1", "k"}, {"y1"}, "conv_minus_k");
  m.node("Conv", {"x", "w"}, {"c2"}, "conv2");
  m.node("Sub", {"k", "c2"}, {"y2"}, "k_minus_conv");
  const ConvertResult r = convert_ok(m);
  EXPECT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Conv, OpFamily::Conv, OpFamily::Binary));
}

TEST(Fusion, ClipIntoConv) {
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4}).output("y");
  m.random("w", {2, 2, 1, 1});
  m.initializer("lo", {}, {0.f}).initializer("hi", {}, {6.f});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("Clip", {"c", "lo", "hi"}, {"y"}, "relu6");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  const auto* act = plan->steps()->Get(0)->params_as_ConvParams()->activation();
  EXPECT_EQ(act->kind(), fb::ActivationKind::Clip);
  EXPECT_EQ(act->alpha(), 0.f);
  EXPECT_EQ(act->beta(), 6.f);
}

TEST(Fusion, GemmActivationAndMatMulBias) {
  ModelBuilder m;
  m.input("x", {3, 5}).output("y1").output("y2");
  m.random("w", {4, 5}).random("c", {4}).random("v", {5, 2}).random("bias", {2});
  auto& gemm = m.node("Gemm", {"x", "w", "c"}, {"g"}, "fc");
  attr(gemm, "transB", int64_t{1});
  m.node("LeakyRelu", {"g"}, {"y1"}, "leaky");
  m.node("MatMul", {"x", "v"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "bias"}, {"mb"}, "bias_add");
  m.node("Tanh", {"mb"}, {"y2"}, "tanh");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm, OpFamily::Gemm));
  const auto* fc = find_step(plan, "fc+leaky")->params_as_GemmParams();
  EXPECT_EQ(fc->activation()->kind(), fb::ActivationKind::LeakyRelu);
  EXPECT_FLOAT_EQ(fc->activation()->alpha(), 0.01f);
  EXPECT_TRUE(fc->trans_b());
  const auto* mm = find_step(plan, "matmul+bias_add+tanh")->params_as_GemmParams();
  EXPECT_TRUE(mm->has_c());
  EXPECT_EQ(mm->activation()->kind(), fb::ActivationKind::Tanh);
}

TEST(Fusion, BinaryActivation) {
  ModelBuilder m;
  m.input("a", {2, 3}).input("b", {3}).output("y");
  m.node("Mul", {"a", "b"}, {"t"}, "mul");
  m.node("Sigmoid", {"t"}, {"y"}, "gate");
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_EQ(plan->steps()->size(), 1u);
  const auto* p = plan->steps()->Get(0)->params_as_BinaryParams();
  EXPECT_EQ(p->op(), fb::BinaryOp::Mul);
  EXPECT_EQ(p->activation()->kind(), fb::ActivationKind::Sigmoid);
}

}  // namespace
}  // namespace jetplan::converter::testing
