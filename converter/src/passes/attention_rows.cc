// The row order around fused attention. nn.MultiheadAttention with batch_first transposes its
// input [B, S, E] to [S, B, E] before the QKV projection and its output back after the output
// projection; both projections work row by row, so a Transpose that keeps the last dim commutes
// with them:
//  - in front: the projection reads x itself and writes [B, S, 3E]; the Attention step's views
//    of the projection (strided_view.h) are re-expressed in that order;
//  - behind: the Attention step writes O with its rows already in the order the Transpose
//    gives (its o_axes), the output projection writes the Transpose's output, and the residual
//    Add after it can fuse into the projection (fuse(), which runs next).
// Neither Transpose then runs. Both rewrites keep every element's value: only where rows are
// stored changes.
#include <algorithm>
#include <numeric>
#include <vector>

#include "converter/src/ir/graph_edit.h"
#include "converter/src/passes/passes.h"

namespace jetplan::converter {
namespace {

// A Gemm that maps each row of A on its own: A not transposed and no vector, a constant weight
// matrix, C absent or one value per column, no residual (which would need the same row order).
bool row_wise_gemm(const Graph& g, const Node& n) {
  if (n.dead || !n.op.resolved || n.op.family != fb::OpFamily::Gemm ||
      n.op.expand != Expansion::kNone || n.op.trans_a || n.op.a_vector || n.op.b_vector ||
      n.op.has_residual || n.inputs.size() < 2 || n.inputs.size() > 3)
    return false;
  const Value& b = g.values[n.inputs[1]];
  if (!b.is_constant || b.shape.size() != 2) return false;
  const int64_t cols = n.op.trans_b ? b.shape[0] : b.shape[1];
  if (n.inputs.size() == 3 && n.inputs[2] >= 0) {
    const Shape& c = g.values[n.inputs[2]].shape;
    if (shape_count(c) != cols || (!c.empty() && c.back() != cols)) return false;
  }
  return true;
}

// A Transpose that keeps the last dim in place.
bool row_transpose(const Node& n) {
  return !n.dead && n.op.resolved && n.op.family == fb::OpFamily::Transpose &&
         n.op.expand == Expansion::kNone && !n.op.perm.empty() &&
         n.op.perm.back() == static_cast<int32_t>(n.op.perm.size() - 1);
}

// A row-wise projection: a row-wise Gemm, maybe followed by the Add of one constant per
// column (its bias, not fused yet: fuse() runs later) that alone reads the Gemm's output.
struct Projection {
  Node* gemm = nullptr;
  Node* bias = nullptr;
  int out() const { return (bias != nullptr ? bias : gemm)->outputs[0]; }
};

bool bias_add(const Graph& g, const Node& add, int gemm_out) {
  if (add.dead || !add.op.resolved || add.op.family != fb::OpFamily::Binary ||
      add.op.binary != fb::BinaryOp::Add || add.op.expand != Expansion::kNone ||
      add.op.act.kind != fb::ActivationKind::None || add.inputs.size() != 2)
    return false;
  const int other = add.inputs[0] == gemm_out ? add.inputs[1] : add.inputs[0];
  if (other == gemm_out || (add.inputs[0] != gemm_out && add.inputs[1] != gemm_out)) return false;
  const Value& c = g.values[other];
  const Shape& y = g.values[gemm_out].shape;
  return c.is_constant && !c.shape.empty() && !y.empty() && c.shape.back() == y.back() &&
         shape_count(c.shape) == y.back() && c.shape.size() <= y.size() &&
         g.values[add.outputs[0]].shape == y;
}

bool copy(const Node& n) {
  return !n.dead && n.op.resolved && n.op.family == fb::OpFamily::Copy &&
         n.op.expand == Expansion::kNone;
}

// The extents of an Attention step's (batch, heads, head dim) from O and its axes.
void o_extents(const Graph& g, const Node& a, int64_t* batch, int64_t* heads, int64_t* dim) {
  const Shape& o = g.values[a.outputs[0]].shape;
  const std::vector<uint8_t>& axes = a.op.attention.o_axes;
  const auto at = [&](size_t i) { return o[axes.empty() ? i : axes[i]]; };
  *batch = at(0);
  *heads = o.size() == 4 ? at(1) : 1;
  *dim = o.back();
}

class RowOrder {
 public:
  explicit RowOrder(Graph& g) : g_(g), readers_(g.consumers()) {}

  // The projection P that the Attention steps read through views, computed from a row
  // Transpose of x: P computed from x, the views re-expressed. False, changing nothing, where a
  // condition fails.
  bool projection_first(int p) {
    Projection proj;
    if (!producing_projection(p, &proj)) return false;
    Node& gemm = *proj.gemm;
    const Value& pv = g_.values[p];
    const int t_out = gemm.inputs[0];
    const Value& tv = g_.values[t_out];
    if (tv.producer < 0 || tv.graph_output || readers_[t_out].size() != 1) return false;
    Node& t = g_.nodes[static_cast<size_t>(tv.producer)];
    if (!row_transpose(t) || t.op.perm.size() != pv.shape.size()) return false;
    // P's dim d is x's dim perm[d]; P' (in x's order) has dense strides.
    const Shape ps = pv.shape;
    const size_t rank = ps.size();
    Shape ps2(rank);
    for (size_t d = 0; d < rank; ++d) ps2[static_cast<size_t>(t.op.perm[d])] = ps[d];
    std::vector<int64_t> dense2(rank, 1), moved(rank);
    for (size_t d = rank - 1; d-- > 0;) dense2[d] = dense2[d + 1] * ps2[d + 1];
    for (size_t d = 0; d < rank; ++d) moved[d] = dense2[static_cast<size_t>(t.op.perm[d])];
    // Every reader an Attention step reading P only through views; each view re-expressed.
    std::vector<std::pair<AttentionViewDesc*, AttentionViewDesc>> remapped;
    for (int r : readers_[p]) {
      Node& a = g_.nodes[static_cast<size_t>(r)];
      if (a.dead || a.op.family != fb::OpFamily::Attention) return false;
      AttentionViewDesc* views[3] = {&a.op.attention.q_view, &a.op.attention.k_view,
                                     &a.op.attention.v_view};
      for (size_t i = 3; i < a.inputs.size(); ++i)
        if (a.inputs[i] == p) return false;  // the mask
      int64_t batch, heads, dim;
      o_extents(g_, a, &batch, &heads, &dim);
      for (size_t i = 0; i < 3; ++i) {
        if (a.inputs[i] != p) continue;
        AttentionViewDesc w = *views[i];
        if (w.seq_len == 0 || !remap(ps, moved, batch, heads, dim, &w)) return false;
        remapped.emplace_back(views[i], w);
      }
    }
    for (auto& [view, w] : remapped) *view = w;
    gemm.inputs[0] = t.inputs[0];
    const int p2 = write_rows(proj, ps2, p);
    for (int r : readers_[p])
      for (int& in : g_.nodes[static_cast<size_t>(r)].inputs)
        if (in == p) in = p2;
    t.dead = true;
    return true;
  }

  // Attention step `a` -> Copies -> row-wise Gemm -> [Copy] -> row Transpose: the step writes
  // its rows in the Transpose's order, the Gemm writes the Transpose's output.
  bool output_in_row_order(Node& a) {
    const int o = a.outputs[0];
    const Shape os = g_.values[o].shape;
    std::vector<uint8_t> axes = a.op.attention.o_axes;
    if (os.size() != 4) return false;
    if (axes.empty()) axes = {0, 1, 2, 3};
    // O's last two dims must be (heads, head dim): the Gemm reads each row's H * D values.
    if (axes[1] != 2 || axes[3] != 3) return false;
    // One or more Copies (the exporter's view to [S * B, E], and the one fuse_patterns() adds
    // where the Gemm writes its reshaped output itself), each read by the next alone.
    std::vector<Node*> copies;
    for (Node* c = only_reader(o); c != nullptr && copy(*c); c = only_reader(c->outputs[0]))
      copies.push_back(c);
    if (copies.empty()) return false;
    Node* c1 = copies.front();
    Projection proj;
    if (!reading_projection(copies.back()->outputs[0], &proj)) return false;
    Node* n = only_reader(proj.out());
    Node* c2 = nullptr;
    if (n != nullptr && copy(*n)) {
      c2 = n;
      n = only_reader(c2->outputs[0]);
    }
    if (n == nullptr || !row_transpose(*n)) return false;
    Node& t = *n;
    const Shape& ts = g_.values[t.inputs[0]].shape;
    const Shape z = g_.values[t.outputs[0]].shape;
    // The Transpose's rows are O's rows: the same extents in the same order.
    if (ts.size() != 3 || ts[0] != os[0] || ts[1] != os[1]) return false;
    // O's row dim j moves to where the Transpose puts its dim j.
    const int32_t to[2] = {t.op.perm[0] == 0 ? 0 : 1, t.op.perm[0] == 0 ? 1 : 0};
    Shape os2 = {os[static_cast<size_t>(t.op.perm[0])], os[static_cast<size_t>(t.op.perm[1])],
                 os[2], os[3]};
    for (uint8_t& x : axes)
      if (x < 2) x = static_cast<uint8_t>(to[x]);
    Value ov = g_.values[o];
    ov.name += ":rows";
    ov.shape = os2;
    const int o2 = g_.add_value(ov);
    Value av = g_.values[copies.back()->outputs[0]];
    av.name += ":rows";
    av.shape = {z[0], z[1], os[2] * os[3]};
    const int a2 = g_.add_value(av);
    a.outputs[0] = o2;
    a.op.attention.o_axes = axes;
    c1->inputs[0] = o2;
    c1->outputs[0] = a2;
    for (size_t i = 1; i < copies.size(); ++i) copies[i]->dead = true;
    proj.gemm->inputs[0] = a2;
    write_rows(proj, z, t.outputs[0]);
    if (c2 != nullptr) c2->dead = true;
    t.dead = true;
    return true;
  }

 private:
  // The view `w` of a dense tensor of shape ps re-expressed where dim d strides by moved[d]:
  // each of its offset and strides split into digits of ps, which must not carry over (the sum
  // of the largest digit each term can add stays below the dim's extent in every dim).
  static bool remap(const Shape& ps, const std::vector<int64_t>& moved, int64_t batch,
                    int64_t heads, int64_t dim, AttentionViewDesc* w) {
    const size_t rank = ps.size();
    const auto digits = [&](int64_t v) {
      std::vector<int64_t> out(rank);
      for (size_t d = rank; d-- > 0;) {
        out[d] = v % ps[d];
        v /= ps[d];
      }
      return out;
    };
    struct Term {
      int64_t* value;
      int64_t extent;
    };
    Term terms[] = {{&w->batch, batch}, {&w->head, heads}, {&w->seq, w->seq_len}};
    const int64_t count = shape_count(ps);
    if (w->offset >= count) return false;
    for (const Term& t : terms)
      if (t.extent > 1 && *t.value >= count) return false;
    std::vector<int64_t> top = digits(w->offset);
    top[rank - 1] += dim - 1;
    for (const Term& t : terms) {
      if (t.extent <= 1) continue;
      const std::vector<int64_t> dv = digits(*t.value);
      for (size_t d = 0; d < rank; ++d) top[d] += (t.extent - 1) * dv[d];
    }
    for (size_t d = 0; d < rank; ++d)
      if (top[d] >= ps[d]) return false;
    const auto apply = [&](int64_t v) {
      const std::vector<int64_t> dv = digits(v);
      int64_t out = 0;
      for (size_t d = 0; d < rank; ++d) out += dv[d] * moved[d];
      return out;
    };
    w->offset = apply(w->offset);
    for (const Term& t : terms) *t.value = t.extent <= 1 ? 0 : apply(*t.value);
    return true;
  }

  Node* only_reader(int value) { return converter::only_reader(g_, readers_, value); }

  // The projection whose last node writes `value`.
  bool producing_projection(int value, Projection* out) {
    const Value& v = g_.values[value];
    if (v.producer < 0 || v.graph_output || readers_[value].empty()) return false;
    Node& last = g_.nodes[static_cast<size_t>(v.producer)];
    if (row_wise_gemm(g_, last)) {
      out->gemm = &last;
      return true;
    }
    for (int in : last.inputs) {
      if (in < 0 || g_.values[in].producer < 0 || readers_[in].size() != 1 ||
          g_.values[in].graph_output)
        continue;
      Node& gemm = g_.nodes[static_cast<size_t>(g_.values[in].producer)];
      if (row_wise_gemm(g_, gemm) && bias_add(g_, last, in)) {
        *out = {&gemm, &last};
        return true;
      }
    }
    return false;
  }
  // The projection that alone reads `value` as its A.
  bool reading_projection(int value, Projection* out) {
    Node* gemm = only_reader(value);
    if (gemm == nullptr || !row_wise_gemm(g_, *gemm) || gemm->inputs[0] != value) return false;
    out->gemm = gemm;
    out->bias = nullptr;
    Node* add = only_reader(gemm->outputs[0]);
    if (add != nullptr && bias_add(g_, *add, gemm->outputs[0])) out->bias = add;
    return true;
  }
  // The projection (its A already rewired) writes rows of `shape`: into value `to` when `to`
  // has that shape, else into a new value like `to` of it, which it returns.
  int write_rows(const Projection& proj, const Shape& shape, int to) {
    int y = to;
    if (g_.values[to].shape != shape) {
      Value v = g_.values[to];
      v.name += ":rows";
      v.shape = shape;
      v.graph_output = false;
      y = g_.add_value(v);
    }
    if (proj.bias == nullptr) {
      proj.gemm->outputs[0] = y;
      return y;
    }
    Value mid = g_.values[proj.gemm->outputs[0]];
    mid.name += ":rows";
    mid.shape = shape;
    const int m = g_.add_value(mid);
    for (int& in : proj.bias->inputs)
      if (in == proj.gemm->outputs[0]) in = m;
    proj.gemm->outputs[0] = m;
    proj.bias->outputs[0] = y;
    return y;
  }

  Graph& g_;
  std::vector<std::vector<int>> readers_;
};

}  // namespace

void attention_row_order(Graph& g) {
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].dead || g.nodes[i].op.family != fb::OpFamily::Attention) continue;
    // Readers change with every rewrite: a fresh view each time.
    if (RowOrder(g).output_in_row_order(g.nodes[i])) changed = true;
    const int q = g.nodes[i].inputs[0];
    if (g.nodes[i].op.attention.q_view.seq_len > 0 && RowOrder(g).projection_first(q))
      changed = true;
  }
  if (!changed) return;
  g.compact();
  eliminate_dead_nodes(g);
}

}  // namespace jetplan::converter
