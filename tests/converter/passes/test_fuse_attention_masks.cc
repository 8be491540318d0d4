// Attention fusion (fuse_attention.cc) of a causal decoder's attention as the exporters write
// GPT-2's: the fused QKV projection a Gemm of [B*S, E] rows (Conv1D's addmm), Split into Q, K
// and V, the scale split over Q and Kt (scaled_dot_product_attention's export), the causal mask
// in the forms torch and transformers write it (a bool mask made additive by Where, a constant
// of 0 and finfo.min, a Where that puts finfo.min or -inf in place of the scores, with an
// all-zero padding mask after it), the NaN guard after the Softmax and a Reshape of O to its own
// shape. Each becomes one Gemm and one causal Attention step reading no mask, and runs on the CPU
// backend to the outputs of the unfused plan. Masks that are not causal stay masks; fills that
// are not "masked out", or that mask out a whole row, keep the steps apart.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>

#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

using OpFamily = fb::OpFamily;


constexpr int64_t kS = 5, kH = 2;
constexpr float kFinfoMin = std::numeric_limits<float>::lowest();

enum class Mask {
  kSdpaBool,         // Add(S, Where(keep [B, 1, S, S], 0, -inf)) (torch's export of sdpa's mask)
  kFinfoAdd,         // Add(mask [1, 1, S, S] of 0 and finfo.min, S) (transformers' eager mask)
  kWhereKeep,        // Where(keep [1, 1, S, S], S, finfo.min) (GPT-2's eager, its bias buffer)
  kWhereDrop,        // Where(drop [S, S], -inf, S)
  kWhereAndPadding,  // kWhereKeep, then Add(., zeros [B, 1, 1, S]) (an all-ones attention_mask)
  kBiasAndCausal,    // kWhereKeep, then Add(., bias [1, H, S, S]): a constant mask, not causal
  kFillMinusOne,     // Where(keep, S, -1): a replacement, not a mask
  kWholeRowMasked,   // Where(keep, S, finfo.min), row 0 masked out too: softmax weighs it evenly
};

// Values of a [rows, S, S] mask: 1 where key j <= query i (`keep`), else 0.
std::vector<float> causal_keep(int64_t rows) {
  std::vector<float> v;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < kS; ++i)
      for (int64_t j = 0; j < kS; ++j) v.push_back(j <= i ? 1.f : 0.f);
  return v;
}

void bool_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<float>& v) {
  onnx::TensorProto* t = m.empty_initializer(name, onnx::TensorProto::BOOL, dims);
  for (float x : v) t->add_int32_data(x != 0.f ? 1 : 0);
}

// GPT-2's self-attention as torch exports it: x [b, S, E] -> Reshape [b*S, E] -> Gemm(., W
// [E, 3E], bias) -> Reshape [b, S, 3E] -> Split (axis 2) -> Reshape [b, S, H, d] -> Transpose
// ([0, 2, 1, 3]; K: [0, 2, 3, 1]) -> Mul by sqrt(scale) (Q and Kt) -> MatMul -> the mask ->
// Softmax -> [Where(IsNaN(P), 0, P)] -> MatMul(., V) -> [Reshape to its shape] -> Transpose
// [0, 2, 1, 3] -> Reshape [b, S, E] -> y.
ModelBuilder gpt_attention(int64_t d, Mask mask, bool guard, bool o_reshape, int64_t b = 2) {
  const int64_t e = kH * d;
  ModelBuilder m(17);
  m.input("x", {b, kS, e}).output("y");
  m.random("w", {e, 3 * e}).random("bias", {3 * e});
  m.initializer_i64("rows", {2}, {b * kS, e}).initializer_i64("bs3e", {3}, {b, kS, 3 * e});
  m.initializer_i64("split", {3}, {e, e, e}).initializer_i64("bshd", {4}, {b, kS, kH, d});
  m.initializer_i64("bhsd", {4}, {b, kH, kS, d}).initializer_i64("bse", {3}, {b, kS, e});
  m.initializer("root_scale", {}, {std::pow(static_cast<float>(d), -0.25f)});
  m.initializer("zero", {}, {0.f}).initializer("neg_inf", {}, {-INFINITY});
  m.node("Reshape", {"x", "rows"}, {"x2"}, "view_rows");
  m.node("Gemm", {"x2", "w", "bias"}, {"qkv2"}, "c_attn");
  m.node("Reshape", {"qkv2", "bs3e"}, {"qkv"}, "view_qkv");
  attr(m.node("Split", {"qkv", "split"}, {"q0", "k0", "v0"}, "split"), "axis", int64_t{2});
  for (const char* n : {"q", "k", "v"}) {
    const std::string s = n;
    m.node("Reshape", {s + "0", "bshd"}, {s + "1"}, s + "_view");
    attr(m.node("Transpose", {s + "1"}, {s + "2"}, s + "_heads"), "perm",
         s == "k" ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
  }
  m.node("Mul", {"q2", "root_scale"}, {"qs"}, "q_scale");
  m.node("Mul", {"k2", "root_scale"}, {"kts"}, "k_scale");
  m.node("MatMul", {"qs", "kts"}, {"scores"}, "qk");
  const auto where_keep = [&](const std::string& fill, const std::vector<float>& keep) {
    m.initializer("fill", {}, {fill == "min" ? kFinfoMin : -1.f});
    bool_initializer(m, "keep", {1, 1, kS, kS}, keep);
    m.node("Where", {"keep", "scores", "fill"}, {"masked"}, "causal_where");
  };
  std::string logits = "masked";
  switch (mask) {
    case Mask::kSdpaBool:
      bool_initializer(m, "keep", {b, 1, kS, kS}, causal_keep(b));
      m.node("Where", {"keep", "zero", "neg_inf"}, {"additive"}, "mask_where");
      m.node("Add", {"scores", "additive"}, {"masked"}, "mask_add");
      break;
    case Mask::kFinfoAdd: {
      std::vector<float> v = causal_keep(1);
      for (float& x : v) x = x != 0.f ? 0.f : kFinfoMin;
      m.initializer("additive", {1, 1, kS, kS}, v);
      m.node("Add", {"additive", "scores"}, {"masked"}, "mask_add");
      break;
    }
    case Mask::kWhereKeep:
      where_keep("min", causal_keep(1));
      break;
    case Mask::kWhereDrop: {
      std::vector<float> drop = causal_keep(1);
      for (float& x : drop) x = 1.f - x;
      bool_initializer(m, "drop", {kS, kS}, drop);
      m.node("Where", {"drop", "neg_inf", "scores"}, {"masked"}, "causal_where");
      break;
    }
    case Mask::kWhereAndPadding:
    case Mask::kBiasAndCausal:
      where_keep("min", causal_keep(1));
      if (mask == Mask::kWhereAndPadding)
        m.initializer("pad", {b, 1, 1, kS}, std::vector<float>(static_cast<size_t>(b * kS), 0.f));
      else
        m.random("pad", {1, kH, kS, kS});
      m.node("Add", {"masked", "pad"}, {"padded"}, "padding_add");
      logits = "padded";
      break;
    case Mask::kFillMinusOne:
      where_keep("-1", causal_keep(1));
      break;
    case Mask::kWholeRowMasked: {
      std::vector<float> keep = causal_keep(1);
      keep[0] = 0.f;
      where_keep("min", keep);
      break;
    }
  }
  attr(m.node("Softmax", {logits}, {"p"}, "softmax"), "axis", int64_t{-1});
  std::string p = "p";
  if (guard) {
    m.node("IsNaN", {"p"}, {"p_nan"}, "nan");
    m.node("Where", {"p_nan", "zero", "p"}, {"p_guarded"}, "nan_guard");
    p = "p_guarded";
  }
  m.node("MatMul", {p, "v2"}, {"o"}, "pv");
  std::string o = "o";
  if (o_reshape) {
    m.node("Reshape", {"o", "bhsd"}, {"o_same"}, "o_view");
    o = "o_same";
  }
  attr(m.node("Transpose", {o}, {"ot"}, "o_t"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.node("Reshape", {"ot", "bse"}, {"y"}, "o_rows");
  return m;
}

// Every causal form: the QKV Gemm and one causal Attention step reading the projection through
// views, nothing of the Split, the head Transposes, the mask, the Softmax or the guard left.
TEST(AttentionMasks, GptCausalAttentionIsOneGemmAndOneCausalStep) {
  for (Mask mask : {Mask::kSdpaBool, Mask::kFinfoAdd, Mask::kWhereKeep, Mask::kWhereDrop,
                    Mask::kWhereAndPadding})
    for (bool guard : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "mask " << static_cast<int>(mask)
                                        << (guard ? " guard" : ""));
      const ModelBuilder m = gpt_attention(8, mask, guard, guard);
      const ConvertResult r = convert_ok(m);
      const fb::Plan* plan = plan_of(r);
      EXPECT_EQ(count_steps(plan, OpFamily::Gemm), 1u);
      EXPECT_EQ(count_steps(plan, OpFamily::Attention), 1u);
      for (OpFamily f : {OpFamily::Softmax, OpFamily::Where, OpFamily::Unary, OpFamily::Binary,
                         OpFamily::Transpose, OpFamily::Slice})
        EXPECT_EQ(count_steps(plan, f), 0u) << fb::EnumNameOpFamily(f);
      const fb::Step* s = find_step_of(plan, OpFamily::Attention);
      ASSERT_NE(s, nullptr);
      const auto* p = s->params_as_AttentionParams();
      EXPECT_TRUE(p->causal());
      EXPECT_FALSE(p->has_mask());
      EXPECT_EQ(s->inputs()->size(), 3u);
      EXPECT_NEAR(p->scale(), 1 / std::sqrt(8.0), 1e-6);
      ASSERT_NE(p->k_view(), nullptr);
      EXPECT_EQ(p->k_view()->offset(), kH * 8);
      expect_same_as_unfused(m, {static_cast<size_t>(2 * kS * kH * 8)}, 2.f);
    }
}

// A constant bias next to the causal Where: one constant mask input, the sum of both (the
// masked-out entries -inf), not the causal flag.
TEST(AttentionMasks, CausalPlusBiasIsOneConstantMask) {
  const ModelBuilder m = gpt_attention(8, Mask::kBiasAndCausal, true, false);
  const ConvertResult r = convert_ok(m);
  const fb::Plan* plan = plan_of(r);
  EXPECT_EQ(count_steps(plan, OpFamily::Softmax), 0u);
  const fb::Step* s = find_step_of(plan, OpFamily::Attention);
  ASSERT_NE(s, nullptr);
  const auto* p = s->params_as_AttentionParams();
  EXPECT_FALSE(p->causal());
  EXPECT_TRUE(p->has_mask());
  ASSERT_EQ(s->inputs()->size(), 4u);
  const fb::Tensor* mask = plan->tensors()->Get(s->inputs()->Get(3));
  EXPECT_THAT(std::vector<int64_t>(mask->shape()->begin(), mask->shape()->end()),
              ElementsAre(1, kH, kS, kS));
  expect_same_as_unfused(m, {static_cast<size_t>(2 * kS * kH * 8)}, 2.f);
}

// A fill that is a value, not "masked out" (-1), or finfo.min over a whole row (softmax then
// weighs that row's keys alike; the fused step would give zeros): the steps stay apart.
TEST(AttentionMasks, FillsThatAreNotMaskingStayApart) {
  for (Mask mask : {Mask::kFillMinusOne, Mask::kWholeRowMasked}) {
    SCOPED_TRACE(static_cast<int>(mask));
    const ConvertResult r = convert_ok(gpt_attention(8, mask, false, false));
    EXPECT_EQ(count_steps(plan_of(r), OpFamily::Attention), 0u);
    EXPECT_EQ(count_steps(plan_of(r), OpFamily::Softmax), 1u);
  }
}

// The GPU plan of GPT-2's head dim (64), converted deviceless: the QKV projection one step, the
// attention one causal jp_attention_f16_d64 step reading no mask, nothing else.
TEST(AttentionMasks, GpuPlanOfGptAttentionIsTwoSteps) {
  ConvertOptions gpu;
  gpu.target = "h100";
  for (int64_t b : {1, 8}) {
    SCOPED_TRACE(b);
    const ConvertResult r =
        convert_onnx(gpt_attention(64, Mask::kSdpaBool, true, true, b).bytes(), "model.onnx", gpu);
    EXPECT_TRUE(loads_without_device(r.plan));
    const fb::Plan* plan = plan_of(r);
    size_t projections = 0, others = 0;
    for (const fb::Step* s : *plan->steps()) {
      if (s->op() == OpFamily::Gemm || s->op() == OpFamily::Conv)
        ++projections;
      else if (s->op() != OpFamily::Attention && s->op() != OpFamily::Cast &&
               s->op() != OpFamily::Copy)
        ++others;  // the float32 graph input and output: a Cast each, a view
    }
    EXPECT_EQ(projections, 1u);
    EXPECT_EQ(others, 0u);
    const fb::Step* s = find_step_of(plan, OpFamily::Attention);
    ASSERT_NE(s, nullptr);
    EXPECT_THAT(s->kernel()->str(), StartsWith("jp_attention_f16_d64_m"));
    EXPECT_TRUE(s->params_as_AttentionParams()->causal());
    EXPECT_FALSE(s->params_as_AttentionParams()->has_mask());
    EXPECT_EQ(s->inputs()->size(), 3u);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
