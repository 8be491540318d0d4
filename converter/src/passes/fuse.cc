// Epilogue fusion: the consumer's work is done by the producer's step as it writes its output,
// which saves a pass over memory and an intermediate buffer. A plan step computes
//   Conv:   act(conv(x, w) + bias + residual), or act(conv(x, w) + bias) + residual
//   Gemm:   act(alpha * A x B + beta * C + residual)
//   Binary: act(a op b)
//   ConvTranspose: act(conv_transpose(x, w) + bias + residual) (only the activation is fused:
//   a U-Net's upsampling + Relu)
// so a consumer is absorbed only where it extends that formula in order.
#include <algorithm>

#include "converter/src/passes/passes.h"

namespace jetplan::converter {
namespace {

// The one live node reading `value` (once), or -1.
int single_reader(const Graph& g, int value) {
  int reader = -1;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (g.nodes[n].dead) continue;
    for (int v : g.nodes[n].inputs) {
      if (v != value) continue;
      if (reader >= 0) return -1;
      reader = static_cast<int>(n);
    }
  }
  return reader;
}

// c broadcasts over y [N, C, ...] as one value per channel (or one value in all).
bool per_channel(const Shape& c, const Shape& y) {
  if (c.size() > y.size()) return false;
  const size_t lead = y.size() - c.size();
  for (size_t i = 0; i < c.size(); ++i) {
    const size_t dim = i + lead;
    if (c[i] != 1 && !(dim == 1 && c[i] == y[1])) return false;
  }
  return true;
}

// The Gemm step strides C by one flat batch index: C's batch dims (all but the last two) must
// be all 1 or be exactly the output's.
bool batch_uniform(const Shape& c, const Shape& y) {
  if (c.size() <= 2) return true;
  const Shape batch_c(c.begin(), c.end() - 2);
  return shape_count(batch_c) == 1 ||
         (c.size() == y.size() && std::equal(batch_c.begin(), batch_c.end(), y.begin()));
}

// Conv + constant per-channel Add (either order) or Sub (conv first) -> new bias value. Any
// other Binary op (Mul, Div, Max, ...) is not an addition and stays a step of its own.
bool absorb_bias(Graph& g, Node& conv, const Node& add, int other) {
  const Value& c = g.values[other];
  const Shape& y = g.values[conv.outputs[0]].shape;
  const bool conv_first = add.inputs[0] == conv.outputs[0];
  const bool sub = add.op.binary == fb::BinaryOp::Sub;
  if (add.op.binary != fb::BinaryOp::Add && !(sub && conv_first)) return false;
  if (!c.is_constant || !per_channel(c.shape, y)) return false;
  const int64_t channels = y[1];
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
  std::vector<double> bias =
      has_bias ? read_doubles(g.values[conv.inputs[2]]) : std::vector<double>(channels, 0.0);
  const std::vector<double> add_values = read_doubles(c);
  for (int64_t ch = 0; ch < channels; ++ch) {
    const double v = add_values.size() == 1 ? add_values[0] : add_values[ch];
    bias[ch] += sub ? -v : v;
  }
  Value b;
  b.name = (has_bias ? g.values[conv.inputs[2]].name : conv.name + ".bias") + "+" + add.name;
  b.dtype = DataType::kFloat32;
  b.shape = {channels};
  b.shape_known = b.is_constant = true;
  b.data = write_doubles(DataType::kFloat32, bias);
  const int id = g.add_value(std::move(b));
  conv.inputs.resize(std::max<size_t>(conv.inputs.size(), 3), -1);
  conv.inputs[2] = id;
  return true;
}

// Tries to absorb the single reader of nodes[at]'s output into it. On success the merged node
// moves to the reader's slot (its inputs may be produced after the producer ran) and `at`
// follows it.
bool absorb_next(Graph& g, size_t* at) {
  Node& n = g.nodes[*at];
  if (n.dead || !n.op.resolved) return false;
  const fb::OpFamily family = n.op.family;
  if (family != fb::OpFamily::Conv && family != fb::OpFamily::Gemm &&
      family != fb::OpFamily::Binary && family != fb::OpFamily::ConvTranspose)
    return false;
  // A step that legalize expands (typed arithmetic promoted through float32, ...) is no single
  // Binary step: neither side of a fusion.
  if (n.op.expand != Expansion::kNone) return false;
  const int y = n.outputs[0];
  const bool activated = n.op.act.kind != fb::ActivationKind::None;
  if (g.values[y].graph_output || (activated && family != fb::OpFamily::Conv)) return false;
  const int reader = single_reader(g, y);
  if (reader < 0) return false;
  Node& c = g.nodes[reader];
  if (!c.op.resolved || c.op.expand != Expansion::kNone) return false;

  bool absorbed = false;
  if (activated) {
    // A Conv whose activation is fused already takes an Add of a tensor of its output's shape
    // as a residual after the activation: the bottlenecks of YOLO-style CSP blocks,
    // x + SiLU(conv(x)). Nothing follows it into the step.
    if (c.op.family != fb::OpFamily::Binary || c.op.binary != fb::BinaryOp::Add ||
        c.op.act.kind != fb::ActivationKind::None || n.op.has_residual ||
        g.values[c.outputs[0]].shape != g.values[y].shape)
      return false;
    const int other = c.inputs[0] == y ? c.inputs[1] : c.inputs[0];
    if (other == y || g.values[other].shape != g.values[y].shape) return false;
    n.inputs.resize(3, -1);
    n.inputs.push_back(other);
    n.op.has_residual = n.op.residual_after_act = true;
    absorbed = true;
  } else if (c.op.family == fb::OpFamily::Activation) {
    n.op.act = c.op.act;
    absorbed = true;
  } else if (c.op.family == fb::OpFamily::Binary &&
             (family == fb::OpFamily::Conv || family == fb::OpFamily::Gemm) &&
             g.values[c.outputs[0]].shape == g.values[y].shape) {
    const int other = c.inputs[0] == y ? c.inputs[1] : c.inputs[0];
    const bool add = c.op.binary == fb::BinaryOp::Add;
    if (family == fb::OpFamily::Conv) {
      if (absorb_bias(g, n, c, other)) {
        absorbed = true;
      } else if (add && !n.op.has_residual && g.values[other].shape == g.values[y].shape) {
        n.inputs.resize(3, -1);
        n.inputs.push_back(other);
        n.op.has_residual = true;
        absorbed = true;
      }
    } else if (n.op.a_vector || n.op.b_vector || !add) {
      // MatMul of a vector: legalize reshapes its output, not an addend's.
    } else if (!g.values[other].is_constant && !n.op.has_residual &&
               g.values[other].shape == g.values[y].shape) {
      // A run-time tensor of the output's shape (a transformer's skip connection): the
      // residual, whether or not the Gemm has a C (its bias) already.
      n.inputs.resize(3, -1);
      n.inputs.push_back(other);
      n.op.has_residual = true;
      absorbed = true;
    } else if (!(n.inputs.size() > 2 && n.inputs[2] >= 0) &&
               batch_uniform(g.values[other].shape, g.values[y].shape)) {
      // Gemm without C: C = the addend (it broadcasts to the output: shapes were equal above).
      if (n.inputs.size() > 2) {
        n.inputs[2] = other;  // a residual follows it
      } else {
        n.inputs.push_back(other);
      }
      n.op.beta = 1.f;
      absorbed = true;
    }
  }
  if (!absorbed) return false;
  n.name += "+" + c.name;
  n.outputs = c.outputs;
  Node merged = std::move(n);
  g.nodes[*at] = Node();
  g.nodes[*at].dead = true;
  g.nodes[reader] = std::move(merged);
  g.values[g.nodes[reader].outputs[0]].producer = reader;
  *at = static_cast<size_t>(reader);
  return true;
}

}  // namespace

void fuse(Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    size_t at = i;
    while (absorb_next(g, &at)) {
    }
  }
  hoist_activations(g);
  g.compact();
}

}  // namespace jetplan::converter
