// Attention fusion (fuse_attention.cc): the exporters' MatMul, scale, mask Add, Softmax, MatMul
// chain becomes one Attention step whose axes absorb the head Transposes, and runs on the CPU
// backend to the outputs of the unfused plan (--no-fuse: separate MatMul, Softmax, Transpose
// steps). What must stay apart stays apart; GPU plans fuse the head dims the CUDA kernels have.
// (tests/e2e/attention_models.py checks torch-exported blocks against torch.)
#include <gmock/gmock.h>

#include <cmath>

#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

using OpFamily = fb::OpFamily;


std::vector<int> axes(const flatbuffers::Vector<uint8_t>* v) {
  return v ? std::vector<int>(v->begin(), v->end()) : std::vector<int>{};
}

// BERT's self-attention as torch exports it, E = 2 D, 2 heads, 6 tokens: x [2, 6, E] -> three
// MatMuls -> Reshape [2, 6, 2, D] -> Transpose (Q, V: [0, 2, 1, 3]; K: [0, 2, 3, 1]) ->
// MatMul(Q, Kt) -> Div sqrt(D) -> [Add(mask [2, 1, 1, 6])] -> Softmax -> MatMul(., V) ->
// Transpose [0, 2, 1, 3] -> Reshape [2, 6, E] -> y.
ModelBuilder bert_attention(int64_t d, bool mask) {
  const int64_t e = 2 * d;
  ModelBuilder m(17);
  m.input("x", {2, 6, e});
  if (mask) m.input("mask", {2, 1, 1, 6});
  m.output("y");
  m.initializer_i64("heads_shape", {4}, {2, 6, 2, d}).initializer_i64("out_shape", {3}, {2, 6, e});
  m.initializer("sqrt_d", {}, {std::sqrt(static_cast<float>(d))});
  for (const char* p : {"q", "k", "v"}) {
    const std::string s = p;
    m.random("w" + s, {e, e});
    m.node("MatMul", {"x", "w" + s}, {s + "_mm"}, s + "_proj");
    m.node("Reshape", {s + "_mm", "heads_shape"}, {s + "_heads"}, s + "_reshape");
    attr(m.node("Transpose", {s + "_heads"}, {s + "_t"}, s + "_transpose"), "perm",
         s == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  m.node("MatMul", {"q_t", "k_t"}, {"scores"}, "qk");
  m.node("Div", {"scores", "sqrt_d"}, {mask ? "scaled" : "logits"}, "scale");
  if (mask) m.node("Add", {"scaled", "mask"}, {"logits"}, "mask_add");
  attr(m.node("Softmax", {"logits"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("MatMul", {"p", "v_t"}, {"o"}, "pv");
  attr(m.node("Transpose", {"o"}, {"o_t"}, "o_transpose"), "perm",
       std::vector<int64_t>{0, 2, 1, 3});
  m.node("Reshape", {"o_t", "out_shape"}, {"y"}, "o_reshape");
  return m;
}

TEST(AttentionFusion, BertSelfAttentionIsOneStepReadingTheProjectionsThroughStrides) {
  for (bool mask : {false, true}) {
    SCOPED_TRACE(mask ? "mask" : "no mask");
    const ModelBuilder m = bert_attention(8, mask);
    const ConvertResult r = convert_ok(m);
    const fb::Plan* plan = plan_of(r);
    EXPECT_EQ(count_steps(plan, OpFamily::Attention), 1u);
    EXPECT_EQ(count_steps(plan, OpFamily::Softmax), 0u);
    EXPECT_EQ(count_steps(plan, OpFamily::Transpose), 0u);  // every head Transpose became axes
    const fb::Step* s = find_step_of(plan, OpFamily::Attention);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_AttentionParams();
    EXPECT_NEAR(p->scale(), 1 / std::sqrt(8.0), 1e-7);
    EXPECT_EQ(p->has_mask(), mask);
    EXPECT_FALSE(p->causal());
    EXPECT_EQ(axes(p->q_axes()), (std::vector<int>{0, 2, 1, 3}));
    EXPECT_EQ(axes(p->k_axes()), (std::vector<int>{0, 2, 1, 3}));
    EXPECT_EQ(axes(p->v_axes()), (std::vector<int>{0, 2, 1, 3}));
    EXPECT_EQ(axes(p->o_axes()), (std::vector<int>{0, 2, 1, 3}));
    // Inputs in [-2, 2): scores of a few units, so the softmax is neither flat nor one-hot.
    expect_same_as_unfused(m, mask ? std::vector<size_t>{2 * 6 * 16, 2 * 6}
                                   : std::vector<size_t>{2 * 6 * 16}, 2.f);
  }
}

// nn.MultiheadAttention's form: 3-D heads [B*H, S, D], the scale a Mul on Q (folded into the
// MatMul's alpha first), Kt a Transpose [0, 2, 1] of K.
ModelBuilder mha_attention(bool softmax_is_output) {
  ModelBuilder m(17);
  m.input("q", {4, 5, 8}).input("k", {4, 7, 8}).input("v", {4, 7, 8}).output("y");
  if (softmax_is_output) m.output("p");
  m.initializer("c", {}, {0.35f});
  m.node("Mul", {"q", "c"}, {"qs"}, "q_scale");
  attr(m.node("Transpose", {"k"}, {"kt"}, "k_transpose"), "perm", std::vector<int64_t>{0, 2, 1});
  m.node("MatMul", {"qs", "kt"}, {"s"}, "qk");
  attr(m.node("Softmax", {"s"}, {"p"}, "softmax"), "axis", int64_t{2});
  m.node("MatMul", {"p", "v"}, {"y"}, "pv");
  return m;
}

TEST(AttentionFusion, MultiheadAttentionOfFlattenedHeads) {
  const ModelBuilder m = mha_attention(false);
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_THAT(step_ops(plan), ElementsAre(OpFamily::Attention));
  const auto* p = plan->steps()->Get(0)->params_as_AttentionParams();
  EXPECT_NEAR(p->scale(), 0.35, 1e-7);
  EXPECT_FALSE(p->has_mask());
  EXPECT_TRUE(axes(p->k_axes()).empty());  // K itself, [B*H, S, D]
  expect_same_as_unfused(m, {4 * 5 * 8, 4 * 7 * 8, 4 * 7 * 8}, 2.f);
}

TEST(AttentionFusion, WhatOthersReadOrNoTransposeGivesStaysApart) {
  // The probabilities are a graph output too: the Softmax stays.
  const ConvertResult r = convert_ok(mha_attention(true));
  EXPECT_EQ(count_steps(plan_of(r), OpFamily::Attention), 0u);
  EXPECT_EQ(count_steps(plan_of(r), OpFamily::Softmax), 1u);
  // Kt given as is ([.., D, S], no Transpose to read through): its head dim is not contiguous.
  ModelBuilder m(17);
  m.input("q", {4, 5, 8}).input("kt", {4, 8, 7}).input("v", {4, 7, 8}).output("y");
  m.node("MatMul", {"q", "kt"}, {"s"}, "qk");
  attr(m.node("Softmax", {"s"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("MatMul", {"p", "v"}, {"y"}, "pv");
  const ConvertResult r2 = convert_ok(m);
  EXPECT_EQ(count_steps(plan_of(r2), OpFamily::Attention), 0u);
}

// The exporters' causal mask, a constant triu(full(-inf), 1), becomes the causal flag (no mask
// read); a constant mask of any other pattern stays a mask.
TEST(AttentionFusion, ConstantCausalMaskBecomesTheFlag) {
  for (bool causal : {true, false}) {
    SCOPED_TRACE(causal ? "causal" : "other mask");
    ModelBuilder m(17);
    m.input("q", {4, 6, 8}).input("k", {4, 6, 8}).input("v", {4, 6, 8}).output("y");
    std::vector<float> mask(36, 0.f);
    for (int i = 0; i < 6; ++i)
      for (int j = i + 1; j < 6; ++j) mask[i * 6 + j] = -INFINITY;
    if (!causal) mask[1] = -1.f;
    m.initializer("mask", {6, 6}, mask);
    attr(m.node("Transpose", {"k"}, {"kt"}, "k_transpose"), "perm", std::vector<int64_t>{0, 2, 1});
    m.node("MatMul", {"q", "kt"}, {"s"}, "qk");
    m.node("Add", {"s", "mask"}, {"sm"}, "mask_add");
    attr(m.node("Softmax", {"sm"}, {"p"}, "softmax"), "axis", int64_t{-1});
    m.node("MatMul", {"p", "v"}, {"y"}, "pv");
    const ConvertResult r = convert_ok(m);
    ASSERT_THAT(step_ops(plan_of(r)), ElementsAre(OpFamily::Attention));
    const fb::Step* s = plan_of(r)->steps()->Get(0);
    EXPECT_EQ(s->params_as_AttentionParams()->causal(), causal);
    EXPECT_EQ(s->params_as_AttentionParams()->has_mask(), !causal);
    EXPECT_EQ(s->inputs()->size(), causal ? 3u : 4u);
    expect_same_as_unfused(m, {4 * 6 * 8, 4 * 6 * 8, 4 * 6 * 8}, 2.f);
  }
}

// Q, K and V cut out of one fused projection [.., 3E], as the exporters write it; 2 heads of 8.
enum class Packed {
  kGather,  // torch 2.x nn.MultiheadAttention: [S, B, 3E] -> Reshape [S, B, 3, E] -> Unsqueeze
            // -> Transpose -> Squeeze -> [3, S, B, E] -> Gather i -> Reshape [S, B*H, D] ->
            // Transpose -> Reshape [B, H, S, D] (rank 4)
  kSlice,   // torch 1.13's: Slice i of [S, B, 3E] -> Reshape [S, B*H, D] -> Transpose (rank 3)
  kSplit,   // one Split of [B, S, 3E] -> Reshape [B, S, H, D] -> Transpose (GPT-2-style)
};
constexpr int64_t kS = 6, kH = 2, kD = 8, kE = kH * kD;

// batch_first (kGather only): nn.MultiheadAttention(batch_first=True) in a residual block: x
// [B, S, E] transposed to [S, B, E] for the projection, O through the output projection (bias;
// a Gemm where out_gemm, as torch exports a 2-D linear, else MatMul + Add) transposed back and
// added to x.
ModelBuilder packed_attention(Packed form, int64_t b, bool batch_first = false,
                              bool out_gemm = false) {
  ModelBuilder m(17);
  const bool seq_first = form != Packed::kSplit;
  const std::vector<int64_t> x = seq_first ? std::vector<int64_t>{kS, b, kE}
                                           : std::vector<int64_t>{b, kS, kE};
  m.output("y").random("w", {kE, 3 * kE});
  if (batch_first) {
    m.input("x_bf", {b, kS, kE}).random("bias", {3 * kE});
    attr(m.node("Transpose", {"x_bf"}, {"x"}, "batch_first_in"), "perm",
         std::vector<int64_t>{1, 0, 2});
    m.node("MatMul", {"x", "w"}, {"qkv_mm"}, "in_proj");
    m.node("Add", {"qkv_mm", "bias"}, {"qkv"}, "in_proj_bias");
  } else {
    m.input("x", x);
    m.node("MatMul", {"x", "w"}, {"qkv"}, "in_proj");
  }
  m.initializer("c", {}, {0.3f});
  std::vector<int64_t> heads = {b, kH, kS, kD};
  if (form == Packed::kSlice) heads = {b * kH, kS, kD};
  m.initializer_i64("heads", {static_cast<int64_t>(heads.size())}, heads);
  const std::vector<int64_t> last = heads.size() == 4 ? std::vector<int64_t>{0, 1, 3, 2}
                                                     : std::vector<int64_t>{0, 2, 1};
  if (form == Packed::kGather) {
    m.initializer_i64("unflat", {4}, {kS, b, 3, kE}).initializer_i64("zero", {1}, {0});
    m.initializer_i64("three", {1}, {3});
    m.node("Reshape", {"qkv", "unflat"}, {"u"}, "unflatten");
    m.node("Unsqueeze", {"u", "zero"}, {"u1"}, "unsqueeze");
    attr(m.node("Transpose", {"u1"}, {"t"}, "transpose_0_m2"), "perm",
         std::vector<int64_t>{3, 1, 2, 0, 4});
    m.node("Squeeze", {"t", "three"}, {"packed"}, "squeeze");
    m.initializer_i64("flat_heads", {3}, {kS, b * kH, kD});
  } else if (form == Packed::kSlice) {
    m.initializer_i64("axis", {1}, {2}).initializer_i64("flat_heads", {3}, {kS, b * kH, kD});
  } else {
    m.initializer_i64("split", {3}, {kE, kE, kE}).initializer_i64("bshd", {4}, {b, kS, kH, kD});
    attr(m.node("Split", {"qkv", "split"}, {"q0", "k0", "v0"}, "split"), "axis", int64_t{2});
  }
  const char* names[] = {"q", "k", "v"};
  for (int64_t i = 0; i < 3; ++i) {
    const std::string n = names[i];
    std::string t = n + "0";
    if (form == Packed::kGather) {
      m.initializer_i64("i" + n, {}, {i});
      attr(m.node("Gather", {"packed", "i" + n}, {t}, "select_" + n), "axis", int64_t{0});
    } else if (form == Packed::kSlice) {
      m.initializer_i64("from_" + n, {1}, {i * kE}).initializer_i64("to_" + n, {1}, {(i + 1) * kE});
      m.node("Slice", {"qkv", "from_" + n, "to_" + n, "axis"}, {t}, "slice_" + n);
    }
    if (form == Packed::kSplit) {
      m.node("Reshape", {t, "bshd"}, {n + "1"}, n + "_view");
      attr(m.node("Transpose", {n + "1"}, {n + "4"}, n + "_heads"), "perm",
           std::vector<int64_t>{0, 2, 1, 3});
    } else {
      m.node("Reshape", {t, "flat_heads"}, {n + "1"}, n + "_view");
      attr(m.node("Transpose", {n + "1"}, {n + "2"}, n + "_heads"), "perm",
           std::vector<int64_t>{1, 0, 2});
      m.node("Reshape", {n + "2", "heads"}, {n + "4"}, n + "_view4");
    }
  }
  attr(m.node("Transpose", {"k4"}, {"kt"}, "k_t"), "perm", last);
  m.node("MatMul", {"q4", "kt"}, {"s"}, "qk");
  m.node("Mul", {"s", "c"}, {"ss"}, "scale");
  attr(m.node("Softmax", {"ss"}, {"p"}, "softmax"), "axis", int64_t{-1});
  m.node("MatMul", {"p", "v4"}, {"o"}, "pv");
  m.initializer_i64("out", {3}, x);
  // O back to x's layout: [B, S, H, D], [S, B, H, D] or [S, B*H, D], then x's shape.
  std::vector<int64_t> o_perm = {0, 2, 1, 3};
  if (form == Packed::kGather) o_perm = {2, 0, 1, 3};
  if (form == Packed::kSlice) o_perm = {1, 0, 2};
  attr(m.node("Transpose", {"o"}, {"ot"}, "o_t"), "perm", o_perm);
  if (!batch_first) {
    m.node("Reshape", {"ot", "out"}, {"y"}, "o_view");
    return m;
  }
  m.initializer_i64("rows", {2}, {kS * b, kE}).random("wo", {kE, kE}).random("bo", {kE});
  m.node("Reshape", {"ot", "rows"}, {"o_rows"}, "o_rows");
  if (out_gemm) {
    m.node("Gemm", {"o_rows", "wo", "bo"}, {"proj"}, "out_proj");
  } else {
    m.node("MatMul", {"o_rows", "wo"}, {"proj_mm"}, "out_proj");
    m.node("Add", {"proj_mm", "bo"}, {"proj"}, "out_proj_bias");
  }
  m.node("Reshape", {"proj", "out"}, {"proj_sbe"}, "proj_view");
  attr(m.node("Transpose", {"proj_sbe"}, {"proj_bse"}, "batch_first_out"), "perm",
       std::vector<int64_t>{1, 0, 2});
  m.node("Add", {"proj_bse", "x_bf"}, {"y"}, "residual");
  return m;
}

// Every form reads Q, K and V as views of the projection's output: no Gather, Slice or
// Transpose runs, the view offsets are 0, E and 2E, and the plan computes what the unfused one
// does. Where a view cannot describe an operand (torch 1.13's [B*H, S, D] at batch 2: batch and
// head strides do not merge), the step reads the Slices' outputs and still matches.
TEST(AttentionFusion, FusedProjectionIsReadThroughViews) {
  struct Case {
    Packed form;
    int64_t batch;
    bool views;
  };
  for (const Case c : {Case{Packed::kGather, 2, true}, Case{Packed::kGather, 1, true},
                       Case{Packed::kSplit, 2, true}, Case{Packed::kSlice, 1, true},
                       Case{Packed::kSlice, 2, false}}) {
    SCOPED_TRACE(::testing::Message() << "form " << static_cast<int>(c.form) << " batch "
                                    << c.batch);
    const ModelBuilder m = packed_attention(c.form, c.batch);
    const ConvertResult r = convert_ok(m);
    const fb::Plan* plan = plan_of(r);
    EXPECT_EQ(count_steps(plan, OpFamily::Attention), 1u);
    EXPECT_EQ(count_steps(plan, OpFamily::Gemm), 1u);
    EXPECT_EQ(count_steps(plan, OpFamily::Gather), 0u);
    EXPECT_EQ(count_steps(plan, OpFamily::Slice), c.views ? 0u : 3u);
    const fb::Step* s = find_step_of(plan, OpFamily::Attention);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_AttentionParams();
    const fb::AttentionView* views[] = {p->q_view(), p->k_view(), p->v_view()};
    for (int i = 0; i < 3; ++i) {
      if (!c.views) {
        EXPECT_EQ(views[i], nullptr);
        continue;
      }
      ASSERT_NE(views[i], nullptr) << i;
      EXPECT_EQ(s->inputs()->Get(i), s->inputs()->Get(0));  // one tensor, three offsets
      EXPECT_EQ(views[i]->offset(), i * kE);
      EXPECT_EQ(views[i]->seq(), c.form == Packed::kSplit ? 3 * kE : c.batch * 3 * kE);
      EXPECT_EQ(views[i]->seq_len(), kS);
      if (c.form != Packed::kSlice) {
        EXPECT_EQ(views[i]->head(), kD);
      }
    }
    if (c.views) {
      EXPECT_EQ(count_steps(plan, OpFamily::Transpose), 0u);
    }
    expect_same_as_unfused(m, {static_cast<size_t>(kS * c.batch * kE)}, 2.f);
  }
}

// batch_first: the Transposes around the two projections leave (the QKV projection reads x,
// the Attention step writes O's rows in [B, S] order, the output projection writes [B, S, E]
// and takes the residual Add): two Gemms and the Attention step, nothing else; the views'
// strides follow the projection's [B, S, 3E] rows.
TEST(AttentionFusion, BatchFirstTransposesMoveIntoTheProjections) {
  for (const auto& [b, out_gemm] : {std::pair{2, false}, std::pair{3, false}, std::pair{2, true}}) {
    SCOPED_TRACE(::testing::Message() << "batch " << b << (out_gemm ? " Gemm" : " MatMul"));
    const ModelBuilder m = packed_attention(Packed::kGather, b, true, out_gemm);
    const ConvertResult r = convert_ok(m);
    const fb::Plan* plan = plan_of(r);
    EXPECT_THAT(step_ops(plan), ElementsAre(OpFamily::Gemm, OpFamily::Attention, OpFamily::Gemm));
    const fb::Step* s = find_step_of(plan, OpFamily::Attention);
    ASSERT_NE(s, nullptr);
    const auto* p = s->params_as_AttentionParams();
    ASSERT_NE(p->k_view(), nullptr);
    EXPECT_EQ(p->k_view()->offset(), kE);
    EXPECT_EQ(p->k_view()->batch(), kS * 3 * kE);
    EXPECT_EQ(p->k_view()->head(), kD);
    EXPECT_EQ(p->k_view()->seq(), 3 * kE);
    EXPECT_EQ(axes(p->o_axes()), (std::vector<int>{0, 2, 1, 3}));  // O [B, S, H, D]
    EXPECT_TRUE(plan->steps()->Get(2)->params_as_GemmParams()->has_residual());
    expect_same_as_unfused(m, {static_cast<size_t>(kS * b * kE)}, 2.f);
  }
}

// GPU plans (deviceless: the converter loads its own plan): a head dim with a CUDA kernel fuses
// and names it; one without (8) keeps its steps.
TEST(AttentionFusion, GpuPlansFuseTheHeadDimsTheKernelsHave) {
  ConvertOptions gpu;
  gpu.target = "h100";
  // (convert_onnx itself: the plan contract of the tests reads CPU plans.)
  const ConvertResult r = convert_onnx(bert_attention(32, true).bytes(), "model.onnx", gpu);
  const fb::Step* s = find_step_of(plan_of(r), OpFamily::Attention);
  ASSERT_NE(s, nullptr);
  EXPECT_THAT(s->kernel()->str(), StartsWith("jp_attention_f16_d32_m"));
  for (uint32_t i = 0; i < s->inputs()->size(); ++i)  // Q, K, V and the mask in FP16
    EXPECT_EQ(plan_of(r)->tensors()->Get(s->inputs()->Get(i))->dtype(), fb::DType::Float16);
  const ConvertResult r16 = convert_onnx(bert_attention(8, true).bytes(), "model.onnx", gpu);
  EXPECT_EQ(count_steps(plan_of(r16), OpFamily::Attention), 0u);
  EXPECT_EQ(count_steps(plan_of(r16), OpFamily::Softmax), 1u);
}

}  // namespace
}  // namespace jetplan::converter::testing
