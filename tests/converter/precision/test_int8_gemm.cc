// INT8 GEMMs (converter/src/precision/int8_gemm.h): Gemm and MatMul steps with constant weights
// run as 1x1 INT8 convs, checked by numbers on the CPU twins (the INT8 reference plan, which
// computes what the GPU kernels compute) and by the kernels a GPU plan names.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>

#include "tests/converter/precision/int8_test_util.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

// A transformer MLP block over `rows` x 32 tokens: MatMul + bias + ReLU to 64 wide, MatMul +
// bias + the block's input, then a Gemm (transB, beta 0.5) to 16 classes and a Softmax.
ModelBuilder mlp_block(int64_t batch) {
  ModelBuilder m;
  m.input("x", {batch, 40, 32}).output("y");
  m.random("w1", {32, 64}, -0.3f, 0.3f).random("b1", {64}, -0.1f, 0.1f);
  m.random("w2", {64, 32}, -0.2f, 0.2f).random("b2", {32}, -0.1f, 0.1f);
  m.random("w3", {16, 32}, -0.3f, 0.3f).random("b3", {16}, -0.2f, 0.2f);
  m.initializer_i64("rows", {2}, {batch * 40, 32});
  m.node("MatMul", {"x", "w1"}, {"m1"}, "fc1");
  m.node("Add", {"m1", "b1"}, {"a1"}, "fc1_bias");
  m.node("Relu", {"a1"}, {"h"}, "fc1_relu");
  m.node("MatMul", {"h", "w2"}, {"m2"}, "fc2");
  m.node("Add", {"m2", "b2"}, {"a2"}, "fc2_bias");
  m.node("Add", {"a2", "x"}, {"r"}, "residual");
  m.node("Reshape", {"r", "rows"}, {"r2"}, "flatten");
  auto& head = m.node("Gemm", {"r2", "w3", "b3"}, {"g"}, "head");
  attr(head, "transB", int64_t{1});
  attr(head, "beta", 0.5f);
  attr(m.node("Softmax", {"g"}, {"y"}, "softmax"), "axis", int64_t{-1});
  return m;
}

// A pre-LN transformer block over 40 tokens: fc0, then LayerNorm -> fc1 + ReLU -> fc2 + the
// residual, then LayerNorm -> a MatMul head and a Softmax. Both LayerNorms feed INT8 GEMMs only.
ModelBuilder pre_ln_block(int64_t batch) {
  ModelBuilder m;
  m.input("x", {batch, 40, 32}).output("y");
  m.random("w0", {32, 32}, -0.3f, 0.3f).random("b0", {32}, -0.1f, 0.1f);
  m.random("g1", {32}, 0.5f, 1.5f).random("e1", {32}, -0.2f, 0.2f);
  m.random("w1", {32, 64}, -0.3f, 0.3f).random("b1", {64}, -0.1f, 0.1f);
  m.random("w2", {64, 32}, -0.2f, 0.2f).random("b2", {32}, -0.1f, 0.1f);
  m.random("g2", {32}, 0.5f, 1.5f).random("e2", {32}, -0.2f, 0.2f);
  m.random("w3", {32, 16}, -0.3f, 0.3f);
  m.node("MatMul", {"x", "w0"}, {"m0"}, "fc0");
  m.node("Add", {"m0", "b0"}, {"t"}, "fc0_bias");
  attr(m.node("LayerNormalization", {"t", "g1", "e1"}, {"n1"}, "ln1"), "axis", int64_t{-1});
  m.node("MatMul", {"n1", "w1"}, {"m1"}, "fc1");
  m.node("Add", {"m1", "b1"}, {"a1"}, "fc1_bias");
  m.node("Relu", {"a1"}, {"h"}, "fc1_relu");
  m.node("MatMul", {"h", "w2"}, {"m2"}, "fc2");
  m.node("Add", {"m2", "b2"}, {"a2"}, "fc2_bias");
  m.node("Add", {"a2", "t"}, {"r"}, "residual");
  attr(m.node("LayerNormalization", {"r", "g2", "e2"}, {"n2"}, "ln2"), "axis", int64_t{-1});
  m.node("MatMul", {"n2", "w3"}, {"g"}, "head");
  attr(m.node("Softmax", {"g"}, {"y"}, "softmax"), "axis", int64_t{-1});
  return m;
}

// The dtype of the output of the step named `name` (fb::DType::MAX + 1 where none is).
fb::DType output_dtype(const fb::Plan* p, const std::string& name) {
  for (const auto* s : *p->steps())
    if (s->name()->str() == name) return p->tensors()->Get(s->outputs()->Get(0))->dtype();
  return static_cast<fb::DType>(static_cast<int>(fb::DType::MAX) + 1);
}

// Every held-out input's output of the INT8 plan is more than `db` dB from the FP32 plan's.
void expect_snr_above(const std::vector<uint8_t>& fp32, const std::vector<uint8_t>& int8,
                      const std::vector<std::vector<float>>& held_out, double db) {
  for (const auto& x : held_out) {
    const auto want = float_outputs(run_plan(fp32, {x}))[0];
    const auto got = float_outputs(run_plan(int8, {x}))[0];
    ASSERT_EQ(got.size(), want.size());
    EXPECT_GT(snr_db(got, want), db);
  }
}

size_t int8_convs(const fb::Plan* p) {
  size_t n = 0;
  for (const auto* s : *p->steps())
    n += s->op() == fb::OpFamily::Conv &&
         p->tensors()->Get(s->inputs()->Get(0))->dtype() == fb::DType::Int8;
  return n;
}

TEST(Int8Gemm, GemmsWithConstantWeightsRunAsInt8Convs) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({2, 40, 32}, 70, &held_out);
  const ConvertResult r = convert_onnx(mlp_block(2).bytes(), "mlp.onnx", options);
  const std::string summary = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_gemms, 3u) << summary;
  EXPECT_EQ(r.summary.int8_steps, 3u) << summary;
  EXPECT_THAT(summary, ::testing::HasSubstr("INT8: 0 convs in INT8, 3 GEMMs in INT8"));
  // fc1's output goes to fc2 as Int8 (no quantize step between them), and fc2's (the residual
  // sum) to the head as Int8 through the flatten's views (r:nhwc, r, r2, r2:nhwc: one buffer);
  // only x is quantized.
  EXPECT_EQ(r.summary.int8_tensors, 5u) << summary;
  EXPECT_EQ(r.summary.quantize_steps, 1u) << summary;
  EXPECT_EQ(int8_convs(fb::GetPlan(r.plan.data())), 3u);
  const std::vector<uint8_t> fp32 = convert_ok(mlp_block(2)).plan;
  expect_snr_above(fp32, r.plan, held_out, 30.0);
}

TEST(Int8Gemm, GpuPlansNameTheInt8ConvKernels) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({2, 40, 32}, 80, &held_out);
  options.target = "h100";
  const ConvertResult r = convert_onnx(mlp_block(2).bytes(), "mlp.onnx", options);
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  std::vector<std::string> kernels;
  for (const auto* s : *p->steps())
    if (s->op() == fb::OpFamily::Conv) kernels.push_back(s->kernel()->str());
  ASSERT_EQ(kernels.size(), 3u);
  for (const std::string& k : kernels) EXPECT_THAT(k, ::testing::StartsWith("jp_conv_igemm_"));
  EXPECT_THAT(kernels[0], ::testing::EndsWith("_i8"));  // fc1 writes Int8 for fc2
  EXPECT_THAT(kernels[1], ::testing::EndsWith("_i8"));  // fc2 for the head, through the views
  EXPECT_THAT(kernels[2], ::testing::EndsWith("_i8_f16out"));  // the head for the Softmax
  EXPECT_TRUE(loads_without_device(r.plan));
}

TEST(Int8Gemm, ShortGemmsAndExcludedOnesStayFloat) {
  std::vector<std::vector<float>> held_out;
  // 40 rows: below kInt8GemmMinRows, the Float16 GEMM kernels keep them.
  ConvertOptions options = int8_cpu_options({1, 40, 32}, 90, &held_out);
  EXPECT_EQ(convert_onnx(mlp_block(1).bytes(), "mlp.onnx", options).summary.int8_gemms, 0u);
  options = int8_cpu_options({2, 40, 32}, 90, &held_out);
  options.int8_exclude = {"head"};
  const ConvertResult r = convert_onnx(mlp_block(2).bytes(), "mlp.onnx", options);
  EXPECT_EQ(r.summary.int8_gemms, 2u) << format_summary("p", r.summary);
  EXPECT_EQ(int8_convs(fb::GetPlan(r.plan.data())), 2u);
}

// A LayerNorm whose readers are all INT8 GEMMs writes Int8 itself (layer_norm_to_int8), through
// the [M, 1, 1, K] view the GEMM reads, instead of Float16 and a quantize step: only the graph
// input is quantized. The INT8 reference plan stays within 30 dB of FP32; the GPU plan names
// the Int8-out LayerNorm kernels and loads; an excluded LayerNorm writes float again, and a
// quantize step follows it.
TEST(Int8Gemm, LayerNormsInFrontOfInt8GemmsWriteInt8) {
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({2, 40, 32}, 110, &held_out);
  const ConvertResult r = convert_onnx(pre_ln_block(2).bytes(), "block.onnx", options);
  const std::string summary = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_gemms, 4u) << summary;
  EXPECT_EQ(r.summary.int8_norm_outputs, 2u) << summary;
  EXPECT_EQ(r.summary.quantize_steps, 1u) << summary;
  EXPECT_THAT(summary, ::testing::HasSubstr("INT8: 0 convs in INT8, 4 GEMMs in INT8"));
  EXPECT_THAT(summary, ::testing::HasSubstr("2 LayerNorms writing Int8"));
  const fb::Plan* cpu = fb::GetPlan(r.plan.data());
  EXPECT_EQ(output_dtype(cpu, "ln1"), fb::DType::Int8);
  EXPECT_EQ(output_dtype(cpu, "ln2"), fb::DType::Int8);
  const std::vector<uint8_t> fp32 = convert_ok(pre_ln_block(2)).plan;
  expect_snr_above(fp32, r.plan, held_out, 30.0);

  options.target = "h100";
  const ConvertResult gpu = convert_onnx(pre_ln_block(2).bytes(), "block.onnx", options);
  const fb::Plan* p = fb::GetPlan(gpu.plan.data());
  size_t q8_norms = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() != fb::OpFamily::LayerNorm) continue;
    EXPECT_EQ(p->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
    EXPECT_THAT(s->kernel()->str(), ::testing::EndsWith("_q8_f16"));
    ++q8_norms;
  }
  EXPECT_EQ(q8_norms, 2u);
  EXPECT_TRUE(loads_without_device(gpu.plan));

  options.target = "cpu";
  options.int8_exclude = {"ln2"};
  const ConvertResult kept = convert_onnx(pre_ln_block(2).bytes(), "block.onnx", options);
  EXPECT_EQ(kept.summary.int8_norm_outputs, 1u);
  EXPECT_EQ(kept.summary.quantize_steps, 2u);
  EXPECT_EQ(output_dtype(fb::GetPlan(kept.plan.data()), "ln2"), fb::DType::Float32);
}

// A Transpose between INT8 steps moves Int8 (the batch-first Transpose of a torchvision ViT
// between ln_1 and the QKV projection): the LayerNorm writes Int8, the Transpose moves it, the
// GEMM reads it; only the graph input is quantized, and the plan stays within 30 dB of FP32.
TEST(Int8Gemm, TransposesBetweenInt8StepsMoveInt8) {
  ModelBuilder m;
  m.input("x", {4, 20, 32}).output("y");
  m.random("w0", {32, 32}, -0.3f, 0.3f);
  m.random("g", {32}, 0.5f, 1.5f).random("e", {32}, -0.2f, 0.2f);
  m.random("w1", {32, 48}, -0.3f, 0.3f);
  m.node("MatMul", {"x", "w0"}, {"t"}, "fc0");
  attr(m.node("LayerNormalization", {"t", "g", "e"}, {"n"}, "ln"), "axis", int64_t{-1});
  attr(m.node("Transpose", {"n"}, {"nt"}, "batch_first"), "perm", std::vector<int64_t>{1, 0, 2});
  m.node("MatMul", {"nt", "w1"}, {"q"}, "qkv");
  attr(m.node("Softmax", {"q"}, {"y"}, "softmax"), "axis", int64_t{-1});
  std::vector<std::vector<float>> held_out;
  const ConvertOptions options = int8_cpu_options({4, 20, 32}, 130, &held_out);
  const ConvertResult r = convert_onnx(m.bytes(), "t.onnx", options);
  const std::string summary = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_gemms, 2u) << summary;
  EXPECT_EQ(r.summary.int8_norm_outputs, 1u) << summary;
  EXPECT_EQ(r.summary.quantize_steps, 1u) << summary;
  EXPECT_EQ(output_dtype(fb::GetPlan(r.plan.data()), "batch_first"), fb::DType::Int8);
  const std::vector<uint8_t> reference = convert_ok(m).plan;
  expect_snr_above(reference, r.plan, held_out, 30.0);
}

// A fused Attention step whose output only an INT8 GEMM reads writes Int8 (attention_to_int8):
// single-head self-attention over 40 tokens (Q, K and V projections, MatMul, scale, Softmax,
// MatMul), then the output projection and a Softmax head. No quantize step but the graph
// input's; within 25 dB of FP32 on the CPU twins; the GPU plan names the _q8 attention kernel
// and loads; excluded, the attention writes float and a quantize step follows it.
TEST(Int8Gemm, AttentionInFrontOfAnInt8GemmWritesInt8) {
  ModelBuilder m;
  m.input("x", {2, 40, 32}).output("y");
  for (const char* w : {"wq", "wk", "wv", "wo"}) m.random(w, {32, 32}, -0.3f, 0.3f);
  m.random("w3", {32, 16}, -0.3f, 0.3f);
  m.initializer("scale", {}, {0.17677669f});
  m.node("MatMul", {"x", "wq"}, {"q"}, "q_proj");
  m.node("MatMul", {"x", "wk"}, {"k"}, "k_proj");
  m.node("MatMul", {"x", "wv"}, {"v"}, "v_proj");
  attr(m.node("Transpose", {"k"}, {"kt"}, "kt"), "perm", std::vector<int64_t>{0, 2, 1});
  m.node("MatMul", {"q", "kt"}, {"s"}, "scores");
  m.node("Mul", {"s", "scale"}, {"ss"}, "scaled");
  attr(m.node("Softmax", {"ss"}, {"pr"}, "probs"), "axis", int64_t{-1});
  m.node("MatMul", {"pr", "v"}, {"o"}, "context");
  m.node("MatMul", {"o", "wo"}, {"a"}, "out_proj");
  m.node("MatMul", {"a", "w3"}, {"g"}, "head");
  attr(m.node("Softmax", {"g"}, {"y"}, "softmax"), "axis", int64_t{-1});
  std::vector<std::vector<float>> held_out;
  ConvertOptions options = int8_cpu_options({2, 40, 32}, 150, &held_out);
  const ConvertResult r = convert_onnx(m.bytes(), "attn.onnx", options);
  const std::string summary = format_summary("p", r.summary);
  EXPECT_EQ(r.summary.int8_attention_outputs, 1u) << summary;
  EXPECT_EQ(r.summary.quantize_steps, 1u) << summary;
  EXPECT_THAT(summary, ::testing::HasSubstr("1 attention steps writing Int8"));
  const fb::Plan* cpu = fb::GetPlan(r.plan.data());
  size_t attention = 0;
  for (const auto* s : *cpu->steps())
    if (s->op() == fb::OpFamily::Attention) {
      ++attention;
      EXPECT_EQ(cpu->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);
    }
  EXPECT_EQ(attention, 1u);
  const std::vector<uint8_t> reference = convert_ok(m).plan;
  expect_snr_above(reference, r.plan, held_out, 25.0);
  options.target = "h100";
  const ConvertResult gpu = convert_onnx(m.bytes(), "attn.onnx", options);
  const fb::Plan* p = fb::GetPlan(gpu.plan.data());
  size_t q8 = 0;
  for (const auto* s : *p->steps())
    q8 += s->op() == fb::OpFamily::Attention &&
          s->kernel()->str().rfind("jp_attention_q8_f16_d32_", 0) == 0;
  EXPECT_EQ(q8, 1u);
  EXPECT_TRUE(loads_without_device(gpu.plan));
  options.target = "cpu";
  options.int8_exclude = {"context"};
  const ConvertResult kept = convert_onnx(m.bytes(), "attn.onnx", options);
  EXPECT_EQ(kept.summary.int8_attention_outputs, 0u) << format_summary("p", kept.summary);
  EXPECT_EQ(kept.summary.quantize_steps, 2u);
}

// FP16 GPU plans run the same GEMMs on the FP16 conv kernels (convert.cc: larger tiles and
// deeper pipelines than the GEMM kernels'; vit_b_16 on an H200 0.93x at batch 1, 0.83x at
// batch 8), from the same row count on; the plan loads without a device.
TEST(Int8Gemm, Fp16GpuPlansRunLongGemmsAsConvs) {
  ConvertOptions options;
  options.target = "h100";
  const ConvertResult r = convert_onnx(mlp_block(2).bytes(), "mlp.onnx", options);
  EXPECT_EQ(r.summary.gemms_as_convs, 3u);
  EXPECT_THAT(format_summary("p", r.summary), ::testing::HasSubstr("3 GEMMs run as 1x1 convs"));
  const fb::Plan* p = fb::GetPlan(r.plan.data());
  size_t convs = 0, gemms = 0;
  for (const auto* s : *p->steps()) {
    if (s->op() == fb::OpFamily::Gemm) ++gemms;
    if (s->op() != fb::OpFamily::Conv) continue;
    ++convs;
    EXPECT_THAT(s->kernel()->str(), ::testing::StartsWith("jp_conv_igemm_"));
    EXPECT_THAT(s->kernel()->str(), ::testing::EndsWith("_f16"));
  }
  EXPECT_EQ(convs, 3u);
  EXPECT_EQ(gemms, 0u);
  EXPECT_TRUE(loads_without_device(r.plan));
  // 40 rows: the GEMM kernels keep them; the CPU target never rewrites.
  EXPECT_EQ(convert_onnx(mlp_block(1).bytes(), "mlp.onnx", options).summary.gemms_as_convs, 0u);
  EXPECT_EQ(convert_ok(mlp_block(2)).summary.gemms_as_convs, 0u);
}

}  // namespace
}  // namespace jetplan::converter::testing
