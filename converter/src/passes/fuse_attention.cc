// Attention fusion: the exporters' decomposition of attention
//   S = MatMul(Q, Kt) [* or / scalar constants] [masks];  P = Softmax(S, last axis);
//   [P = Where(IsNaN(P), 0, P)];  O = MatMul(P, V)
// (nn.MultiheadAttention, BERT-style self-attention, ViT encoder blocks and GPT-style causal
// decoders, 3-D [B*H, S, D] or 4-D [B, H, S, D]) becomes one Attention step
// (kernels/attention.h), so no score matrix is written. A scale on Q (or split over Q and Kt,
// as torch exports scaled_dot_product_attention) folded into the first MatMul's alpha by
// fuse_patterns() (which runs first) is the step's scale too. The masks are Adds of a mask and
// Wheres that put a very negative fill in place of masked-out scores; constant ones become one
// mask, or the causal flag where they are the exporters' causal mask (triu of -inf or
// finfo.min, a bool tril through Where, torch's is_causal; batch dims broadcast or repeated).
// The Transposes that move the heads around Q, K, V and O are
// read through the step's axes instead: Q and V from the tensor before their Transpose, K from
// the tensor before the Transpose that made Kt, O written straight into the layout of a
// Transpose that reads it. Where Q, K and V are cut out of one fused projection (Slices, Split,
// or a Transpose and Gathers, then Reshapes and Transposes: nn.MultiheadAttention's in_proj,
// GPT-2's c_attn), each is read as a strided view of the projection's output (strided_view.h)
// and none of those steps runs. The nodes left without readers die.
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

// A mask entry at most this (float16's lowest, -65504; torch.finfo(dtype).min and -inf are
// below it) masks its key out: softmax weighs it exp(-65504 + the scores' spread) = 0 in
// float32, as it does -inf, wherever the row keeps a key (ConstantMask::keeps_rows_of_replaced).
constexpr double kMaskedOut = -65504.0;

// The sum of constant masks of shapes that broadcast to the scores (right-aligned), each entry
// 0, a bias, or -inf (masked out).
struct ConstantMask {
  Shape shape;
  std::vector<double> values;
  bool replaced = false;  // a term replaced scores by a finite fill, not added -inf to them

  // this += (m, v); replaces: v comes from a Where's fill.
  void add(const Shape& m, const std::vector<double>& v, bool replaces) {
    replaced = replaced || replaces;
    if (values.empty()) {
      shape = m;
      values = v;
      return;
    }
    Shape out(std::max(shape.size(), m.size()), 1);
    for (size_t i = 0; i < out.size(); ++i)
      out[out.size() - 1 - i] = std::max(dim(shape, i), dim(m, i));
    const std::vector<double> x = expand(shape, values, out), y = expand(m, v, out);
    values.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) values[i] = x[i] + y[i];
    shape = out;
  }
  // Dim i from the right; 1 past the rank.
  static int64_t dim(const Shape& s, size_t i) { return i < s.size() ? s[s.size() - 1 - i] : 1; }
  // v (of shape `from`) broadcast to `to`.
  static std::vector<double> expand(const Shape& from, const std::vector<double>& v,
                                    const Shape& to) {
    std::vector<double> out(static_cast<size_t>(shape_count(to)));
    for (size_t o = 0; o < out.size(); ++o) {
      int64_t rest = static_cast<int64_t>(o), at = 0, stride = 1;
      for (size_t i = 0; i < to.size(); ++i) {
        const int64_t d = rest % dim(to, i), f = dim(from, i);
        rest /= dim(to, i);
        at += (f == 1 ? 0 : d) * stride;
        stride *= f;
      }
      out[o] = v[static_cast<size_t>(at)];
    }
    return out;
  }
  bool zeros() const {
    return std::all_of(values.begin(), values.end(), [](double e) { return e == 0.0; });
  }
  // Every [Sq, Sk] matrix 0 where key j <= query i and -inf where j > i.
  bool causal(const Shape& scores) const {
    const int64_t sq = scores[scores.size() - 2], sk = scores.back();
    if (shape.size() < 2 || shape[shape.size() - 2] != sq || shape.back() != sk) return false;
    for (size_t at = 0; at < values.size(); ++at) {
      const int64_t i = static_cast<int64_t>(at) / sk % sq, j = static_cast<int64_t>(at) % sk;
      const double e = values[at];
      if (j > i ? !(std::isinf(e) && e < 0) : e != 0.0) return false;
    }
    return true;
  }
  // Where a finite fill replaced the scores, a row with every key masked out weighs its keys
  // alike, where the Attention step gives zeros: such a mask must keep a key in every row.
  bool keeps_rows_of_replaced() const {
    if (!replaced || shape.empty()) return true;
    const size_t sk = static_cast<size_t>(shape.back());
    for (size_t r = 0; r + sk <= values.size(); r += sk)
      if (std::all_of(values.begin() + static_cast<std::ptrdiff_t>(r),
                      values.begin() + static_cast<std::ptrdiff_t>(r + sk),
                      [](double e) { return std::isinf(e); }))
        return false;
    return true;
  }
};

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
    std::vector<Node*> chain = {&softmax};
    int p = softmax.outputs[0];
    if (Node* guard = nan_guard(p, &chain)) p = guard->outputs[0];
    Node* pv = only_reader(p);
    if (pv == nullptr || !plain_matmul(*pv) || pv->inputs[0] != p || pv->op.alpha != 1.f)
      return false;
    chain.push_back(pv);

    // Back from the Softmax: the masks, scalar scales, the Q Kt MatMul.
    AttentionDesc a;
    int s = softmax.inputs[0];
    std::vector<Node*> masked;
    if (!masks(scores_shape, &s, &a, &masked)) return false;
    chain.insert(chain.end(), masked.begin(), masked.end());
    Node* n = private_producer(s);
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

    // O: the second MatMul's output, or a Transpose of it that keeps the head dim last, maybe
    // after Copies that keep O's shape (torch's TorchScript export of scaled_dot_product_attention
    // reshapes its output to the shape it has).
    int o = pv->outputs[0];
    Node* last = pv;
    std::vector<Node*> copies;
    Node* t = only_reader(o);
    while (t != nullptr && plain(*t, fb::OpFamily::Copy) &&
           g_.values[t->outputs[0]].shape == g_.values[o].shape) {
      copies.push_back(t);
      t = only_reader(t->outputs[0]);
    }
    if (t != nullptr && plain(*t, fb::OpFamily::Transpose) && t->op.perm.size() == rank &&
        t->op.perm.back() == static_cast<int32_t>(rank - 1)) {
      // Transpose output dim i is O's dim perm[i]: O's dim j sits at the i with perm[i] == j.
      a.o_axes.assign(rank, 0);
      for (size_t i = 0; i < rank; ++i) a.o_axes[t->op.perm[i]] = static_cast<uint8_t>(i);
      o = t->outputs[0];
      chain.insert(chain.end(), copies.begin(), copies.end());
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
    if (!combined_.values.empty())
      mask_ = new_constant(g_, last->name + ":mask", DataType::kFloat32, combined_.shape,
                           write_doubles(DataType::kFloat32, combined_.values));
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
  // `value` is the Q Kt MatMul's output, maybe through scalar scales and other masks (Adds,
  // Wheres: masks() checks them), each read by one node.
  bool reaches_matmul(int value, int depth = 0) {
    Node* n = private_producer(value);
    if (n == nullptr || depth > 8) return false;
    if (plain_matmul(*n)) return true;
    if (scale_of(*n) != 0.0)
      return reaches_matmul(n->inputs[std::isnan(scalar(n->inputs[1])) ? 1 : 0], depth + 1);
    if (binary(*n, fb::BinaryOp::Add))
      return reaches_matmul(n->inputs[0], depth + 1) || reaches_matmul(n->inputs[1], depth + 1);
    if (plain(*n, fb::OpFamily::Where) && n->inputs.size() == 3)
      return reaches_matmul(n->inputs[1], depth + 1) || reaches_matmul(n->inputs[2], depth + 1);
    return false;
  }
  // Where(IsNaN(P), 0, P) after the Softmax P (torch's export of scaled_dot_product_attention
  // zeroes rows whose every key is masked out, which softmax makes NaN): the Where, with the
  // IsNaN and it added to *chain, else nullptr. The Attention step gives such rows zeros
  // itself (a NaN it reads still reaches its output, where the guard would write 0).
  Node* nan_guard(int p, std::vector<Node*>* chain) {
    if (g_.values[p].graph_output || readers_[p].size() != 2) return nullptr;
    Node* isnan = &g_.nodes[static_cast<size_t>(readers_[p][0])];
    Node* where = &g_.nodes[static_cast<size_t>(readers_[p][1])];
    if (isnan->op.family == fb::OpFamily::Where) std::swap(isnan, where);
    const int c = isnan->outputs[0];
    if (isnan->dead || !isnan->op.resolved || isnan->op.family != fb::OpFamily::Unary ||
        isnan->op.unary != fb::UnaryOp::IsNaN || isnan->op.expand != Expansion::kNone ||
        isnan->inputs[0] != p || readers_[c].size() != 1 || g_.values[c].graph_output ||
        !plain(*where, fb::OpFamily::Where) || where->inputs.size() != 3 ||
        where->inputs[0] != c || where->inputs[2] != p || scalar(where->inputs[1]) != 0.0 ||
        g_.values[where->outputs[0]].shape != g_.values[p].shape)
      return nullptr;
    chain->push_back(isnan);
    chain->push_back(where);
    return where;
  }

  // The masks between the scores and the Softmax, from the Softmax back: Adds of a mask, and
  // Wheres that put a fill in place of masked-out scores (Where(keep, S, fill) or
  // Where(drop, fill, S): the condition a constant, the fill a scalar constant at most
  // kMaskedOut). One Add of a run-time mask is read as it is. Constant ones are summed into
  // one mask (-inf: masked out), which becomes the causal flag where it is the exporters'
  // causal mask (0 on and below the diagonal, masked out above: the kernel then skips the key
  // tiles past the diagonal and reads no mask), nothing where it is all zeros, and a constant
  // mask input (made by the caller, combined_) otherwise. *s: the scores before the masks,
  // *found: the mask nodes. False where a node there matches none of these.
  bool masks(const Shape& scores, int* s, AttentionDesc* a, std::vector<Node*>* found) {
    ConstantMask sum;
    int runtime = -1;
    for (Node* n = private_producer(*s); n != nullptr; n = private_producer(*s)) {
      if (binary(*n, fb::BinaryOp::Add)) {
        // The scores are the addend that comes from the Q Kt MatMul; the other is the mask.
        const int k = reaches_matmul(n->inputs[0]) ? 0 : 1;
        const int mask = n->inputs[1 - k];
        const Value& m = g_.values[mask];
        if (mask == n->inputs[k] || !reaches_matmul(n->inputs[k]) ||
            m.dtype != DataType::kFloat32 || !mask_broadcasts(m.shape, scores))
          return false;
        if (m.is_constant) {
          std::vector<double> v = read_doubles(m);
          for (double& e : v)
            if (e <= kMaskedOut) e = -INFINITY;
          sum.add(m.shape, v, false);
        } else if (runtime < 0) {
          runtime = mask;
        } else {
          return false;
        }
        *s = n->inputs[k];
      } else if (plain(*n, fb::OpFamily::Where) && n->inputs.size() == 3) {
        const Value& cond = g_.values[n->inputs[0]];
        const int k = reaches_matmul(n->inputs[1]) ? 1 : 2;
        const double fill = scalar(n->inputs[3 - k]);
        if (!cond.is_constant || cond.dtype != DataType::kBool ||
            !mask_broadcasts(cond.shape, scores) || !reaches_matmul(n->inputs[k]) ||
            !(fill <= kMaskedOut))
          return false;
        // The scores are kept where the condition is true (k == 1) or false (k == 2).
        std::vector<double> v = read_doubles(cond);
        for (double& e : v) e = (e != 0.0) == (k == 1) ? 0.0 : -INFINITY;
        sum.add(cond.shape, v, true);
        *s = n->inputs[k];
      } else {
        break;
      }
      found->push_back(n);
    }
    mask_ = runtime;
    combined_ = ConstantMask();
    if (!sum.values.empty()) {
      if (runtime >= 0 || !mask_broadcasts(sum.shape, scores) || !sum.keeps_rows_of_replaced())
        return false;
      a->causal = sum.causal(scores);
      if (!a->causal && !sum.zeros()) combined_ = std::move(sum);
    }
    a->has_mask = runtime >= 0 || !combined_.values.empty();
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
  int mask_ = -1;            // the mask input of the step (has_mask)
  ConstantMask combined_;  // when not empty: the constant mask to make for it
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
