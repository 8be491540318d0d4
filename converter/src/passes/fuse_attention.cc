// Attention fusion: the exporters' decomposition of attention
//   S = MatMul(Q, Kt) [* or / scalar constants] [+ mask];  P = Softmax(S, last axis);
//   O = MatMul(P, V)
// (nn.MultiheadAttention, BERT-style self-attention and ViT encoder blocks, 3-D [B*H, S, D] or
// 4-D [B, H, S, D]) becomes one Attention step (kernels/attention.h), so no score matrix is
// written. A scale on Q folded into the first MatMul's alpha by fuse_patterns() (which runs
// first) is the step's scale too. The Transposes that move the heads around Q, K, V and O are
// read through the step's axes instead: Q and V from the tensor before their Transpose, K from
// the tensor before the Transpose that made Kt, O written straight into the layout of a
// Transpose that reads it. Where Q, K and V are cut out of one fused projection (Slices, Split,
// or a Transpose and Gathers, then Reshapes and Transposes: nn.MultiheadAttention's in_proj),
// each is read as a strided view of the projection's output (strided_view.h) and none of those
// steps runs. The nodes left without readers die.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/ir/graph_edit.h"
#include "converter/src/passes/passes.h"
#include "converter/src/passes/strided_view.h"
#include "kernels/attention.h"

namespace jetplan::converter {
namespace {

class AttentionFusion {
 public:
  AttentionFusion(Graph& g, bool gpu) : g_(g), gpu_(gpu), readers_(g.consumers()) {}

  // Fuses at the Softmax node `at`; false (changing nothing) when the pattern does not match.
  bool fuse_at(size_t at) {
    Node& softmax = g_.nodes[at];
    if (!plain(softmax, fb::OpFamily::Softmax) || softmax.op.log ||
        !softmax.op.softmax_view.empty())
      return false;
    const Shape& scores_shape = g_.values[softmax.outputs[0]].shape;
    const size_t rank = scores_shape.size();
    if ((rank != 3 && rank != 4) || softmax.op.axis != static_cast<int32_t>(rank - 1)) return false;
    Node* pv = only_reader(softmax.outputs[0]);
    if (pv == nullptr || !plain_matmul(*pv) || pv->inputs[0] != softmax.outputs[0] ||
        pv->op.alpha != 1.f)
      return false;

    // Back from the Softmax: an optional mask Add, scalar scales, the Q Kt MatMul.
    std::vector<Node*> chain = {&softmax, pv};
    AttentionDesc a;
    int s = softmax.inputs[0];
    Node* n = private_producer(s);
    if (n != nullptr && binary(*n, fb::BinaryOp::Add)) {
      // The scores are the addend that comes from the Q Kt MatMul; the other is the mask.
      const int k = reaches_matmul(n->inputs[0]) ? 0 : 1;
      const int mask = n->inputs[1 - k];
      s = n->inputs[k];
      if (mask == s || !reaches_matmul(s) || g_.values[mask].dtype != DataType::kFloat32 ||
          !mask_broadcasts(g_.values[mask].shape, scores_shape))
        return false;
      mask_ = mask;
      // A constant causal mask (0 on and below the diagonal, -inf above) is the causal flag:
      // the kernel then skips the key tiles past the diagonal and reads no mask.
      a.causal = is_causal_mask(g_.values[mask], scores_shape);
      a.has_mask = !a.causal;
      chain.push_back(n);
      n = private_producer(s);
    }
    double scale = 1.0;
    while (n != nullptr && scale_of(*n) != 0.0) {
      scale *= scale_of(*n);
      chain.push_back(n);
      s = n->inputs[std::isnan(scalar(n->inputs[1])) ? 1 : 0];
      n = private_producer(s);
    }
    if (n == nullptr || !plain_matmul(*n)) return false;
    Node& qk = *n;
    chain.push_back(&qk);
    a.scale = static_cast<float>(scale * qk.op.alpha);

    // The operands: Q [.., Sq, D], Kt [.., D, Sk] (or K [.., Sk, D] under trans_b), V [.., Sk,
    // D], every batch dim equal to the scores' (no broadcasting).
    const Shape& q = g_.values[qk.inputs[0]].shape;
    const Shape& kt = g_.values[qk.inputs[1]].shape;
    const Shape& v = g_.values[pv->inputs[1]].shape;
    if (q.size() != rank || kt.size() != rank || v.size() != rank) return false;
    if (!std::equal(q.begin(), q.end() - 2, scores_shape.begin()) ||
        !std::equal(kt.begin(), kt.end() - 2, scores_shape.begin()) ||
        !std::equal(v.begin(), v.end() - 2, scores_shape.begin()) || v.back() != q.back())
      return false;
    if (gpu_ && !kernels::attention_head_dim_on_gpu(q.back())) return false;
    int q_src = -1, k_src = -1, v_src = -1;
    if (!operand(qk.inputs[0], false, &q_src, &a.q_axes, &a.q_view) ||
        !operand(qk.inputs[1], !qk.op.trans_b, &k_src, &a.k_axes, &a.k_view) ||
        !operand(pv->inputs[1], false, &v_src, &a.v_axes, &a.v_view))
      return false;

    // O: the second MatMul's output, or a Transpose of it that keeps the head dim last.
    int o = pv->outputs[0];
    Node* last = pv;
    Node* t = only_reader(o);
    if (t != nullptr && plain(*t, fb::OpFamily::Transpose) && t->op.perm.size() == rank &&
        t->op.perm.back() == static_cast<int32_t>(rank - 1)) {
      // Transpose output dim i is O's dim perm[i]: O's dim j sits at the i with perm[i] == j.
      a.o_axes.assign(rank, 0);
      for (size_t i = 0; i < rank; ++i) a.o_axes[t->op.perm[i]] = static_cast<uint8_t>(i);
      o = t->outputs[0];
      chain.push_back(t);
      last = t;
    }

    // The fused node's name lists the nodes in graph order (nodes live in one vector).
    std::sort(chain.begin(), chain.end());
    std::string name;
    for (Node* c : chain) {
      if (c == last) continue;
      name += c->name + "+";
      c->dead = true;
    }
    last->name = name + last->name;
    last->op_type = "Attention";
    last->op = OpDesc();
    last->op.resolved = true;
    last->op.family = fb::OpFamily::Attention;
    last->op.attention = a;
    last->inputs = {q_src, k_src, v_src};
    if (a.has_mask) last->inputs.push_back(mask_);
    last->outputs = {o};
    last->attrs.clear();
    return true;
  }

 private:
  bool plain(const Node& n, fb::OpFamily family) const {
    return !n.dead && n.op.resolved && n.op.family == family && n.op.expand == Expansion::kNone &&
           n.op.act.kind == fb::ActivationKind::None &&
           g_.values[n.outputs[0]].dtype == DataType::kFloat32;
  }
  bool binary(const Node& n, fb::BinaryOp op) const {
    return plain(n, fb::OpFamily::Binary) && n.op.binary == op && n.inputs.size() == 2;
  }
  // A MatMul (a Gemm step without C, residual or transposed A, of matrices).
  bool plain_matmul(const Node& n) const {
    return plain(n, fb::OpFamily::Gemm) && n.inputs.size() == 2 && !n.op.trans_a &&
           !n.op.has_residual && !n.op.a_vector && !n.op.b_vector;
  }
  Node* private_producer(int value) { return converter::private_producer(g_, readers_, value); }
  Node* only_reader(int value) { return converter::only_reader(g_, readers_, value); }
  // The factor of a Mul by a scalar constant or a Div by one (x / c), else 0.
  double scale_of(const Node& n) const {
    if (binary(n, fb::BinaryOp::Div)) {
      const double c = scalar(n.inputs[1]);
      return std::isnan(c) || c == 0.0 ? 0.0 : 1.0 / c;
    }
    if (!binary(n, fb::BinaryOp::Mul)) return 0.0;
    const double c = std::isnan(scalar(n.inputs[1])) ? scalar(n.inputs[0]) : scalar(n.inputs[1]);
    return std::isnan(c) ? 0.0 : c;
  }
  // `value` is the Q Kt MatMul's output, maybe through scalar scales, each read by one node.
  bool reaches_matmul(int value) {
    Node* n = private_producer(value);
    while (n != nullptr && scale_of(*n) != 0.0)
      n = private_producer(n->inputs[std::isnan(scalar(n->inputs[1])) ? 1 : 0]);
    return n != nullptr && plain_matmul(*n);
  }
  // A float32 constant whose every [Sq, Sk] matrix is 0 where key j <= query i and -inf where
  // j > i, with no other dim above 1 (the exporters' triu(full(-inf), 1) buffer).
  static bool is_causal_mask(const Value& m, const Shape& scores) {
    if (!m.is_constant || m.dtype != DataType::kFloat32 || m.shape.size() < 2) return false;
    const int64_t sq = scores[scores.size() - 2], sk = scores.back();
    if (m.shape[m.shape.size() - 2] != sq || m.shape.back() != sk ||
        shape_count(m.shape) != sq * sk)
      return false;
    const std::vector<double> v = read_doubles(m);
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < sk; ++j) {
        const double e = v[static_cast<size_t>(i * sk + j)];
        if (j > i ? !(std::isinf(e) && e < 0) : e != 0.0) return false;
      }
    return true;
  }
  // The value of a float32 scalar constant, or NaN.
  double scalar(int value) const {
    const Value& v = g_.values[value];
    if (!v.is_constant || v.dtype != DataType::kFloat32 || shape_count(v.shape) != 1) return NAN;
    return read_doubles(v)[0];
  }
  // A float32 mask that broadcasts to the scores (right-aligned, each dim 1 or equal).
  bool mask_broadcasts(const Shape& m, const Shape& scores) const {
    if (m.size() > scores.size()) return false;
    for (size_t i = 0; i < m.size(); ++i) {
      const int64_t want = scores[scores.size() - m.size() + i];
      if (m[i] != 1 && m[i] != want) return false;
    }
    return true;
  }
  // An operand of a MatMul: the value the step reads (*src) and how: either the dim of it that
  // holds each of the operand's (batch, [heads,] seq, head dim) (*axes; empty: the value itself,
  // in order), or a strided view into a larger value (*view) where that drops more steps than
  // the axes do (the Slices, Gathers and Transposes that cut Q, K and V out of one projection).
  // `transposed`: the operand is Kt ([.., D, S]), the head dim second to last. Nodes read by
  // others stay; they die when nothing reads them.
  bool operand(int value, bool transposed, int* src, std::vector<uint8_t>* axes,
               AttentionViewDesc* view) {
    const bool by_axes = axes_operand(value, transposed, src, axes);
    const size_t absorbed = by_axes && *src != value ? 1 : 0;  // one Transpose
    const StridedView deep = deepest_strided_view(g_, value);
    size_t steps = 0;
    for (const Node* n : deep.chain) steps += n->op.family != fb::OpFamily::Copy;
    if (steps > absorbed && view_operand(deep, transposed, view)) {
      *src = deep.source;
      axes->clear();
      return true;
    }
    return by_axes;
  }
  // The view of an operand of rank 3 or 4 (its dims (batch, [heads,] seq, head dim); Kt's last
  // two swapped): each dim one stride, the head dim contiguous.
  static bool view_operand(const StridedView& deep, bool transposed, AttentionViewDesc* view) {
    StridedLayout l = deep.layout;
    const size_t rank = l.dims.size();
    if (rank != 3 && rank != 4) return false;
    if (transposed) std::swap(l.dims[rank - 1], l.dims[rank - 2]);
    SubDim dims[4];
    for (size_t i = 0; i < rank; ++i)
      if (!single_stride(l, i, &dims[i])) return false;
    if (dims[rank - 1].extent > 1 && dims[rank - 1].stride != 1) return false;
    view->offset = l.offset;
    view->batch = dims[0].stride;
    view->head = rank == 4 ? dims[1].stride : 0;
    view->seq = dims[rank - 2].stride;
    view->seq_len = dims[rank - 2].extent;
    return view->seq_len > 0;
  }
  // The axes form of operand(): the value itself, or the input of the one Transpose that made
  // it with the head dim staying last.
  bool axes_operand(int value, bool transposed, int* src, std::vector<uint8_t>* axes) {
    const size_t rank = g_.values[value].shape.size();
    const Value& v = g_.values[value];
    const Node* t = v.producer >= 0 ? &g_.nodes[v.producer] : nullptr;
    std::vector<int32_t> perm;
    if (t != nullptr && plain(*t, fb::OpFamily::Transpose) && t->op.perm.size() == rank) {
      // Operand dim i is the source's dim perm[i]; Kt's last two are (D, S): swap them.
      perm = t->op.perm;
      if (transposed) std::swap(perm[rank - 1], perm[rank - 2]);
    }
    if (perm.empty() || perm.back() != static_cast<int32_t>(rank - 1)) {
      *src = value;
      axes->clear();
      return !transposed;
    }
    *src = t->inputs[0];
    axes->assign(perm.begin(), perm.end());
    std::vector<uint8_t> identity(rank);
    std::iota(identity.begin(), identity.end(), 0);
    if (*axes == identity) axes->clear();
    return true;
  }

  Graph& g_;
  const bool gpu_;
  std::vector<std::vector<int>> readers_;
  int mask_ = -1;
};

}  // namespace

void fuse_attention(Graph& g, bool gpu) {
  bool fused = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].dead) continue;
    // Readers change with every fusion; a fresh view per Softmax keeps them exact.
    if (AttentionFusion(g, gpu).fuse_at(i)) fused = true;
  }
  if (!fused) return;
  g.compact();
  eliminate_dead_nodes(g);
  attention_row_order(g);
}

}  // namespace jetplan::converter
