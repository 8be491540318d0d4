// The opset-23 ops that run as the graphs of their definitions (check_support's DecomposeFn):
// Attention decomposed and fused back into one Attention step where fuse_attention matches it,
// its numbers against a brute-force reference, and the refusals of Attention and
// RotaryEmbedding naming the node. (Against ONNX Runtime and the ONNX node tests:
// tests/e2e/transformer_ops_onnxruntime.py, tests/conformance.)
#include <cmath>

#include "tests/converter/util/ir_model_util.h"

namespace jetplan::converter::testing {
namespace {

// softmax(q k^T / sqrt(d) + causal) v per (batch, head) of [B, H, S, D] tensors, in double.
std::vector<float> brute_attention(const std::vector<float>& q, const std::vector<float>& k,
                                   const std::vector<float>& v, int64_t bh, int64_t s, int64_t d) {
  std::vector<float> out(q.size());
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < s; ++i) {
      std::vector<double> p(static_cast<size_t>(s), 0.0);
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d; ++e)
          dot += double(q[(b * s + i) * d + e]) * k[(b * s + j) * d + e];
        p[size_t(j)] = dot / std::sqrt(double(d));
        m = std::max(m, p[size_t(j)]);
      }
      for (int64_t j = 0; j <= i; ++j) sum += (p[size_t(j)] = std::exp(p[size_t(j)] - m));
      for (int64_t e = 0; e < d; ++e) {
        double o = 0;
        for (int64_t j = 0; j <= i; ++j) o += p[size_t(j)] / sum * v[(b * s + j) * d + e];
        out[size_t((b * s + i) * d + e)] = float(o);
      }
    }
  return out;
}

TEST(AttentionOp, CausalFourDimsFusesIntoOneStepAndMatchesBruteForce) {
  ModelBuilder m(23);
  m.input("q", {1, 2, 5, 8}).input("k", {1, 2, 5, 8}).input("v", {1, 2, 5, 8}).output("y");
  attr(m.node("Attention", {"q", "k", "v"}, {"y"}, "attn"), "is_causal", int64_t{1});
  const auto& [r, plan, s] = convert_to_first_step(m, OpFamily::Attention);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(plan->steps()->size(), 1u);  // nothing but the fused step
  const auto* p = s->params_as_AttentionParams();
  EXPECT_TRUE(p->causal());  // the constant causal bias became the flag
  EXPECT_FALSE(p->has_mask());
  EXPECT_NEAR(p->scale(), 1 / std::sqrt(8.f), 1e-7);
  std::vector<float> q(80), k(80), v(80);
  for (size_t i = 0; i < 80; ++i) {
    q[i] = std::sin(0.37f * float(i));
    k[i] = std::cos(0.21f * float(i));
    v[i] = 0.05f * float(i) - 1;
  }
  const std::vector<Output> out = run_plan(r.plan, {q, k, v});
  ASSERT_EQ(out.size(), 1u);
  expect_near(out[0].as<float>(), brute_attention(q, k, v, 2, 5, 8), 1e-5f);
}

TEST(AttentionOp, RefusalsNameTheNode) {
  {
    ModelBuilder m(23);  // 3-D without head counts: an invalid node
    m.input("q", {1, 4, 16}).output("y");
    m.node("Attention", {"q", "q", "q"}, {"y"}, "no_heads");
    EXPECT_THAT(convert_error(m), HasSubstr("'no_heads' (Attention): 3-D inputs need q_num_heads "
                                            "and kv_num_heads above 0"));
  }
  {
    ModelBuilder m(23);  // float64 and a qk_matmul_output of mode 3, each named in the one error
    m.input("q", {1, 2, 3, 8}).input("d", {1, 2, 3, 8}, onnx::TensorProto::DOUBLE);
    m.output("y").output("qk").output("z", onnx::TensorProto::DOUBLE);
    attr(m.node("Attention", {"q", "q", "q"}, {"y", "", "", "qk"}, "mode3"),
         "qk_matmul_output_mode", int64_t{3});
    m.node("Attention", {"d", "d", "d"}, {"z"}, "wide");
    const std::string e = convert_error(m);
    EXPECT_THAT(e, HasSubstr("'mode3' (Attention): the qk_matmul_output output (output 3) of "
                             "qk_matmul_output_mode 3 is not supported"));
    EXPECT_THAT(e, HasSubstr("'wide' (Attention): input 'd' is float64"));
  }
  {
    ModelBuilder m(22);  // no Attention before opset 23
    m.input("q", {1, 2, 3, 8}).output("y");
    m.node("Attention", {"q", "q", "q"}, {"y"}, "early");
    EXPECT_THAT(convert_error(m), HasSubstr("Attention is not an op of opset 22"));
  }
  {
    ModelBuilder m(23);  // an odd rotary_embedding_dim
    m.input("x", {1, 2, 3, 8}).input("c", {1, 3, 2}).output("y");
    attr(m.node("RotaryEmbedding", {"x", "c", "c"}, {"y"}, "rope"), "rotary_embedding_dim",
         int64_t{3});
    EXPECT_THAT(convert_error(m), HasSubstr("'rope' (RotaryEmbedding): rotary_embedding_dim 3 "
                                            "must be even"));
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
