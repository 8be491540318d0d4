// Pattern rewrites that run before epilogue fusion: what exporters spell as several elementwise
// nodes becomes the one activation or Gemm scale it computes, so that fuse() can fold it into
// the producer's epilogue.
//   x * Sigmoid(x)                                  -> Activation Silu
//   x * 0.5 * (1 + Erf(x / sqrt(2)))  (any order)   -> Activation Gelu
//   x * 0.5 * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))  (any order, x^3 as Pow or two
//                                                      Muls)  -> Activation GeluTanh
//   MatMul(s * x) through Transposes and Copies     -> MatMul(x) with alpha * s (s a constant)
//   Transpose(Transpose(x))                         -> one Transpose (views take the identity)
//   reshape(Gemm(A, B))                             -> Gemm(reshape(A), B): the Gemm meets what
//                                                      reads the reshape (a residual Add)
#include <cmath>
#include <string>
#include <vector>

#include "converter/src/ir/graph_edit.h"
#include "converter/src/passes/passes.h"

namespace jetplan::converter {
namespace {

class Patterns {
 public:
  explicit Patterns(Graph& g) : g_(g) {}

  // Each rewrite restarts the scan on a compacted graph (producers and readers up to date).
  void run() {
    bool changed = true;
    while (changed) {
      changed = false;
      g_.compact();
      readers_ = g_.consumers();
      for (size_t i = 0; i < g_.nodes.size() && !changed; ++i) {
        if (g_.nodes[i].dead || !g_.nodes[i].op.resolved) continue;
        changed = silu(i) || gelu(i) || gelu_tanh(i) || scale_into_gemm(i) ||
                  compose_transposes(i) || view_through_gemm(i);
      }
    }
    g_.compact();
  }

 private:
  bool plain(const Node& n, fb::OpFamily family) const {
    return !n.dead && n.op.resolved && n.op.family == family &&
           n.op.expand == Expansion::kNone &&
           n.op.act.kind == fb::ActivationKind::None && is_floating(g_.values[n.outputs[0]].dtype);
  }
  bool binary(const Node& n, fb::BinaryOp op) const {
    return plain(n, fb::OpFamily::Binary) && n.op.binary == op && n.inputs.size() == 2;
  }
  Node* private_producer(int value) { return converter::private_producer(g_, readers_, value); }
  Node* only_reader(int value) { return converter::only_reader(g_, readers_, value); }
  // The single element of a float32 or float64 constant, or NaN (read_doubles takes no float16).
  double scalar(int value) const {
    const Value& v = g_.values[value];
    if (!v.is_constant || (v.dtype != DataType::kFloat32 && v.dtype != DataType::kFloat64) ||
        v.data.empty() || shape_count(v.shape) != 1)
      return NAN;
    return read_doubles(v)[0];
  }
  static bool near(double a, double b) { return std::fabs(a - b) <= 1e-4 * std::fabs(b); }
  // For a two-input node: the input that is not `v`, or -1 when neither or both are.
  static int other(const Node& n, int v) {
    if (n.inputs[0] == v && n.inputs[1] != v) return n.inputs[1];
    if (n.inputs[1] == v && n.inputs[0] != v) return n.inputs[0];
    return -1;
  }
  // `at` becomes Activation `kind` of x (same shape as its output); the others die.
  void become_activation(Node& at, fb::ActivationKind kind, int x,
                         const std::vector<Node*>& dead) {
    std::string name;
    for (Node* n : dead) {
      name += n->name + "+";
      n->dead = true;
    }
    at.name = name + at.name;
    at.op = OpDesc();
    at.op.resolved = true;
    at.op.family = fb::OpFamily::Activation;
    at.op.act.kind = kind;
    at.op_type = kind == fb::ActivationKind::Silu ? "Silu" : "Gelu";
    at.attrs.clear();
    if (kind == fb::ActivationKind::GeluTanh) {
      at.attrs["approximate"].kind = Attribute::Kind::kString;
      at.attrs["approximate"].s = "tanh";
    }
    at.inputs = {x};
  }

  // Mul(x, Sigmoid(x)).
  bool silu(size_t i) {
    Node& mul = g_.nodes[i];
    if (!binary(mul, fb::BinaryOp::Mul)) return false;
    for (int k = 0; k < 2; ++k) {
      Node* sig = private_producer(mul.inputs[k]);
      if (sig == nullptr || !sig->op.resolved || sig->op.family != fb::OpFamily::Activation ||
          sig->op.act.kind != fb::ActivationKind::Sigmoid)
        continue;
      const int x = sig->inputs[0];
      if (mul.inputs[1 - k] != x || g_.values[x].shape != g_.values[mul.outputs[0]].shape)
        continue;
      become_activation(mul, fb::ActivationKind::Silu, x, {sig});
      return true;
    }
    return false;
  }

  // Erf(x / sqrt2 | x * (1/sqrt2)) + 1, then * x and * 0.5 in either order.
  bool gelu(size_t i) {
    Node& erf = g_.nodes[i];
    if (!plain(erf, fb::OpFamily::Unary) || erf.op.unary != fb::UnaryOp::Erf) return false;
    Node* scaled = private_producer(erf.inputs[0]);
    if (scaled == nullptr) return false;
    int x = -1;
    if (binary(*scaled, fb::BinaryOp::Div) && near(scalar(scaled->inputs[1]), std::sqrt(2.0)))
      x = scaled->inputs[0];
    for (int k = 0; k < 2 && x < 0; ++k)
      if (binary(*scaled, fb::BinaryOp::Mul) && near(scalar(scaled->inputs[k]), std::sqrt(0.5)))
        x = scaled->inputs[1 - k];
    if (x < 0) return false;
    const Shape& shape = g_.values[x].shape;
    Node* add = only_reader(erf.outputs[0]);
    if (add == nullptr || !binary(*add, fb::BinaryOp::Add)) return false;
    const int one = other(*add, erf.outputs[0]);
    if (one < 0 || !near(scalar(one), 1.0)) return false;
    Node* mul = only_reader(add->outputs[0]);
    if (mul == nullptr || !binary(*mul, fb::BinaryOp::Mul)) return false;
    const int factor = other(*mul, add->outputs[0]);
    if (factor < 0 || g_.values[mul->outputs[0]].shape != shape) return false;
    if (factor == x) {  // (x * (1 + erf)) * 0.5
      Node* half = only_reader(mul->outputs[0]);
      if (half == nullptr || !binary(*half, fb::BinaryOp::Mul)) return false;
      const int c = other(*half, mul->outputs[0]);
      if (c < 0 || !near(scalar(c), 0.5)) return false;
      become_activation(*half, fb::ActivationKind::Gelu, x, {scaled, &erf, add, mul});
      return true;
    }
    Node* half = private_producer(factor);  // (x * 0.5) * (1 + erf)
    if (half == nullptr || !binary(*half, fb::BinaryOp::Mul)) return false;
    const int c = other(*half, x);
    if (c < 0 || !near(scalar(c), 0.5)) return false;
    become_activation(*mul, fb::ActivationKind::Gelu, x, {half, scaled, &erf, add});
    return true;
  }

  // For a Mul: the operand beside a scalar constant near c (either side), or -1.
  int scaled_by(const Node& mul, double c) const {
    if (!binary(mul, fb::BinaryOp::Mul)) return -1;
    for (int k = 0; k < 2; ++k)
      if (near(scalar(mul.inputs[k]), c)) return mul.inputs[1 - k];
    return -1;
  }
  // x^3 as Pow(x, 3), x * (x * x) or (x * x) * x, written to `value` (read once); its nodes.
  bool cube_of(int value, int x, std::vector<Node*>* nodes) {
    Node* c = private_producer(value);
    if (c == nullptr) return false;
    if (binary(*c, fb::BinaryOp::Pow) && c->inputs[0] == x && near(scalar(c->inputs[1]), 3.0)) {
      nodes->push_back(c);
      return true;
    }
    if (!binary(*c, fb::BinaryOp::Mul)) return false;
    const int square = other(*c, x);
    Node* sq = square < 0 ? nullptr : private_producer(square);
    if (sq == nullptr || !binary(*sq, fb::BinaryOp::Mul) || sq->inputs[0] != x ||
        sq->inputs[1] != x)
      return false;
    nodes->insert(nodes->end(), {c, sq});
    return true;
  }

  // Tanh(c1 * (x + c2 * x^3)) (c1 = sqrt(2 / pi), c2 = 0.044715) + 1, then the product of it, x
  // and 0.5 in any grouping; every Mul and Add in either operand order.
  bool gelu_tanh(size_t i) {
    Node& tanh = g_.nodes[i];
    if (tanh.op.family != fb::OpFamily::Activation ||
        tanh.op.act.kind != fb::ActivationKind::Tanh || tanh.op.expand != Expansion::kNone ||
        !is_floating(g_.values[tanh.outputs[0]].dtype))
      return false;
    std::vector<Node*> dead = {&tanh};
    Node* scaled = private_producer(tanh.inputs[0]);
    const int inner = scaled == nullptr ? -1 : scaled_by(*scaled, 0.7978845608028654);
    Node* sum = inner < 0 ? nullptr : private_producer(inner);
    if (sum == nullptr || !binary(*sum, fb::BinaryOp::Add)) return false;
    dead.insert(dead.end(), {scaled, sum});
    int x = -1;
    for (int k = 0; k < 2 && x < 0; ++k) {
      Node* cubic = private_producer(sum->inputs[1 - k]);
      const int cube = cubic == nullptr ? -1 : scaled_by(*cubic, 0.044715);
      if (cube >= 0 && cube_of(cube, sum->inputs[k], &dead)) {
        x = sum->inputs[k];
        dead.push_back(cubic);
      }
    }
    if (x < 0) return false;
    const Shape& shape = g_.values[x].shape;
    Node* add = only_reader(tanh.outputs[0]);
    if (add == nullptr || !binary(*add, fb::BinaryOp::Add)) return false;
    const int one = other(*add, tanh.outputs[0]);
    if (one < 0 || !near(scalar(one), 1.0)) return false;
    dead.push_back(add);
    Node* mul = only_reader(add->outputs[0]);
    if (mul == nullptr || !binary(*mul, fb::BinaryOp::Mul)) return false;
    const int factor = other(*mul, add->outputs[0]);
    if (factor < 0) return false;
    Node* last = mul;
    if (factor == x || near(scalar(factor), 0.5)) {  // (t * x) * 0.5 or (t * 0.5) * x
      last = only_reader(mul->outputs[0]);
      if (last == nullptr || !binary(*last, fb::BinaryOp::Mul)) return false;
      const int rest = other(*last, mul->outputs[0]);
      if (factor == x ? !near(scalar(rest), 0.5) : rest != x) return false;
      dead.push_back(mul);
    } else {  // (x * 0.5) * t
      Node* half = private_producer(factor);
      if (half == nullptr || scaled_by(*half, 0.5) != x) return false;
      dead.push_back(half);
    }
    if (g_.values[last->outputs[0]].shape != shape) return false;
    become_activation(*last, fb::ActivationKind::GeluTanh, x, dead);
    return true;
  }

  // Mul(x, s) or Div(x, s), s a floating scalar constant, whose result reaches operand A or B of
  // a Gemm only through Transposes and Copies (linear: they commute with the scaling).
  bool scale_into_gemm(size_t i) {
    Node& b = g_.nodes[i];
    double s = NAN;
    int x = -1;
    if (binary(b, fb::BinaryOp::Div)) {
      s = 1.0 / scalar(b.inputs[1]);
      x = b.inputs[0];
    } else if (binary(b, fb::BinaryOp::Mul)) {
      for (int k = 0; k < 2 && x < 0; ++k)
        if (!std::isnan(scalar(b.inputs[k]))) {
          s = scalar(b.inputs[k]);
          x = b.inputs[1 - k];
        }
    }
    if (x < 0 || !std::isfinite(s) || g_.values[x].shape != g_.values[b.outputs[0]].shape)
      return false;
    int value = b.outputs[0];
    Node* reader = only_reader(value);
    while (reader != nullptr && reader->op.resolved &&
           reader->op.expand == Expansion::kNone &&
           (reader->op.family == fb::OpFamily::Transpose ||
            reader->op.family == fb::OpFamily::Copy)) {
      value = reader->outputs[0];
      reader = only_reader(value);
    }
    if (reader == nullptr || !reader->op.resolved || reader->op.family != fb::OpFamily::Gemm ||
        reader->op.expand != Expansion::kNone ||
        !(reader->inputs[0] == value || reader->inputs[1] == value) ||
        reader->inputs[0] == reader->inputs[1])
      return false;
    reader->op.alpha = static_cast<float>(reader->op.alpha * s);
    reader->name = b.name + "+" + reader->name;
    Node& first = g_.nodes[readers_[b.outputs[0]][0]];
    for (int& in : first.inputs)
      if (in == b.outputs[0]) in = x;
    b.dead = true;
    return true;
  }

  // Transpose(Transpose(x, p1), p2) = Transpose(x, p1[p2[i]]): one step instead of two.
  bool compose_transposes(size_t i) {
    Node& second = g_.nodes[i];
    if (!plain(second, fb::OpFamily::Transpose)) return false;
    Node* first = private_producer(second.inputs[0]);
    if (first == nullptr || !plain(*first, fb::OpFamily::Transpose)) return false;
    const std::vector<int32_t>& p1 = first->op.perm;
    std::vector<int32_t>& p2 = second.op.perm;
    if (p1.size() != p2.size()) return false;
    std::vector<int32_t> combined(p2.size());
    for (size_t k = 0; k < p2.size(); ++k) {
      if (p2[k] < 0 || static_cast<size_t>(p2[k]) >= p1.size()) return false;
      combined[k] = p1[static_cast<size_t>(p2[k])];
    }
    p2 = combined;
    second.inputs[0] = first->inputs[0];
    second.name = first->name + "+" + second.name;
    first->dead = true;
    return true;
  }

  // Gemm(A, B) read only by a reshape (a Copy, or a Transpose moving extent-1 dims only) of
  // its [..., M, N] output into [..., N]: the Gemm computes that shape itself from A viewed as
  // [..., K] (the same bytes: a Copy node, a view in the plan), so that what reads the reshape
  // (a residual Add) reads the Gemm. A not transposed, B one matrix, C absent or one value per
  // column.
  bool view_through_gemm(size_t i) {
    Node& gemm = g_.nodes[i];
    if (!gemm.op.resolved || gemm.op.family != fb::OpFamily::Gemm ||
        gemm.op.expand != Expansion::kNone ||
        gemm.op.act.kind != fb::ActivationKind::None ||
        gemm.op.trans_a || gemm.op.a_vector || gemm.op.b_vector || gemm.op.has_residual ||
        gemm.inputs.size() < 2)
      return false;
    Node* view = only_reader(gemm.outputs[0]);
    if (view == nullptr || !view->op.resolved || view->op.expand != Expansion::kNone)
      return false;
    const Shape& y = g_.values[gemm.outputs[0]].shape;
    const bool reshape = view->op.family == fb::OpFamily::Copy ||
                         (view->op.family == fb::OpFamily::Transpose &&
                          moves_only_unit_dims(y, view->op.perm));
    if (!reshape || view->outputs.size() != 1) return false;
    const Shape& to = g_.values[view->outputs[0]].shape;
    const Value& a = g_.values[gemm.inputs[0]];
    const Shape& b = g_.values[gemm.inputs[1]].shape;
    if (y.size() < 2 || to.size() < 2 || a.shape.size() < 2 || b.size() < 2 ||
        to.back() != y.back() || shape_count(Shape(b.begin(), b.end() - 2)) != 1)
      return false;
    if (gemm.inputs.size() > 2 && gemm.inputs[2] >= 0) {
      const Shape& c = g_.values[gemm.inputs[2]].shape;
      if (shape_count(c) != y.back() || c.back() != y.back()) return false;
    }
    Shape a_view(to.begin(), to.end() - 1);
    a_view.push_back(a.shape.back());
    if (shape_count(a_view) != shape_count(a.shape)) return false;
    const int a2 = new_value(g_, a.name + ":view", a.dtype, a_view);
    Node copy = copy_node(view->name + ":a", gemm.inputs[0], a2);
    gemm.inputs[0] = a2;
    gemm.outputs = view->outputs;
    gemm.name += "+" + view->name;
    view->dead = true;
    g_.nodes.insert(g_.nodes.begin() + static_cast<std::ptrdiff_t>(i), std::move(copy));
    return true;
  }

  Graph& g_;
  std::vector<std::vector<int>> readers_;
};

}  // namespace

void fuse_patterns(Graph& g) { Patterns(g).run(); }

}  // namespace jetplan::converter
