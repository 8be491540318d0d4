// Contract rule of Gemm (schemas/plan.fbs GemmParams): y[b] = op(A[b]) x op(B[b]) + C + R,
// A [.., M, K] ([.., K, M] with trans_a), B [.., K, N] ([.., N, K] with trans_b), C broadcasting
// to y, the residual R of y's shape. QLinearMatMul's rule is with the quantized families.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {

void contract_gemm(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_GemmParams();
  const auto& in = c.in;
  const Shape& y = c.y;
  if (!p || in.size() != 2u + p->has_c() + p->has_residual())
    return c.bad("step ", c.name, " gemm params/inputs");
  const Shape &a = in[0], &b = in[1];
  if (a.size() < 2 || b.size() < 2) return c.bad("step ", c.name, " gemm rank");
  const int64_t m = p->trans_a() ? a.back() : a[a.size() - 2];
  const int64_t ka = p->trans_a() ? a[a.size() - 2] : a.back();
  const int64_t kb = p->trans_b() ? b.back() : b[b.size() - 2];
  const int64_t n = p->trans_b() ? b[b.size() - 2] : b.back();
  c.expect(ka == kb, "gemm K");
  c.expect(y.size() >= 2 && y[y.size() - 2] == m && y.back() == n, "gemm output " + str(y));
  const Shape batch(y.begin(), y.end() - 2);
  for (const Shape* op : {&a, &b}) {
    const Shape ob(op->begin(), op->end() - 2);
    c.expect(ob == batch || count(ob) == 1, "gemm batch " + str(*op) + " vs " + str(y));
  }
  Shape c_out;
  if (p->has_c()) c.expect(broadcast(in[2], y, &c_out) && c_out == y, "gemm C broadcast");
  if (p->has_residual()) c.expect(in.back() == y, "gemm residual shape " + str(in.back()));
}

}  // namespace jetplan::converter::testing::contract

namespace jetplan::converter::testing::contract {

namespace {

// (batch, heads, seq, head dim) of an Attention operand of shape s read through `axes` (schema
// AttentionParams: the tensor dim of each; rank 3 has no heads, which count 1). Empty when the
// axes are not a permutation ending in the last dim.
Shape attention_dims(const Shape& s, const flatbuffers::Vector<uint8_t>* axes) {
  const size_t rank = s.size();
  std::vector<size_t> order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = axes ? axes->Get(static_cast<uint32_t>(i)) : i;
  if ((axes && axes->size() != rank) || order.back() != rank - 1) return {};
  std::vector<bool> seen(rank, false);
  for (size_t i : order) {
    if (i >= rank || seen[i]) return {};
    seen[i] = true;
  }
  if (rank == 3) return {s[order[0]], 1, s[order[1]], s[2]};
  return {s[order[0]], s[order[1]], s[order[2]], s[3]};
}

}  // namespace

// Q, K, V, [mask] -> O: one rank (3 or 4), batch, heads and head dim shared, K and V one
// sequence length, O Q's; the mask broadcasts to [batch, heads, seq_q, seq_kv] (rank 3: no heads).
// An operand with a view (q_view ...) is a tensor of any shape that holds every element the view
// reaches (O's batch, heads and head dim, the view's rows), strides not negative.
void contract_attention(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_AttentionParams();
  if (!p || !c.input_count_is(p->has_mask() ? 4 : 3)) return c.bad("step ", c.name, " attention");
  const size_t rank = c.y.size();
  if (rank != 3 && rank != 4) return c.bad("step ", c.name, " attention rank");
  const Shape o = attention_dims(c.y, p->o_axes());
  if (o.empty()) return c.bad("step ", c.name, " axes");
  const fb::AttentionView* views[3] = {p->q_view(), p->k_view(), p->v_view()};
  const flatbuffers::Vector<uint8_t>* axes[3] = {p->q_axes(), p->k_axes(), p->v_axes()};
  Shape dims[3];
  for (size_t i = 0; i < 3; ++i) {
    if (const fb::AttentionView* w = views[i]) {
      c.expect(axes[i] == nullptr, "attention operand with axes and a view");
      c.expect(w->offset() >= 0 && w->batch() >= 0 && w->head() >= 0 && w->seq() >= 0 &&
                   w->seq_len() > 0, "attention view strides");
      dims[i] = {o[0], o[1], w->seq_len(), o[3]};
      const int64_t last = w->offset() + (o[0] - 1) * w->batch() + (o[1] - 1) * w->head() +
                           (w->seq_len() - 1) * w->seq() + o[3];
      c.expect(last <= count(c.in[i]), "attention view inside its tensor");
      continue;
    }
    c.expect(c.in[i].size() == rank, "attention operand rank");
    if (c.in[i].size() != rank) return;
    dims[i] = attention_dims(c.in[i], axes[i]);
    if (dims[i].empty()) return c.bad("step ", c.name, " axes");
  }
  const Shape &q = dims[0], &k = dims[1], &v = dims[2];
  for (size_t d : {size_t{0}, size_t{1}, size_t{3}})
    c.expect(k[d] == q[d] && v[d] == q[d] && o[d] == q[d], "attention batch/heads/head dim");
  c.expect(k[2] == v[2] && o[2] == q[2], "attention sequence lengths");
  if (!p->has_mask()) return;
  Shape full = {q[0], q[1], q[2], k[2]};
  if (rank == 3) full.erase(full.begin() + 1);
  Shape out;
  c.expect(broadcast(c.in[3], full, &out) && out == full, "attention mask " + str(c.in[3]));
}

}  // namespace jetplan::converter::testing::contract
