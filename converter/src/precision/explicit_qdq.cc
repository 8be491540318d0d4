#include "converter/src/precision/explicit_qdq.h"

#include <algorithm>
#include <cmath>

#include "converter/src/ir/error.h"

namespace jetplan::converter {
namespace {

bool is_op(const Node& n, const char* op) {
  return !n.dead && n.domain.empty() && n.op_type == op;
}

const Value* input_value(const Graph& g, const Node& n, size_t k) {
  return k < n.inputs.size() && n.inputs[k] >= 0 ? &g.values[n.inputs[k]] : nullptr;
}

// A Q or DQ node's scales: constant, positive and finite, else a ConvertError naming the node.
std::vector<float> scales_of(const Graph& g, const Node& n) {
  const Value* s = input_value(g, n, 1);
  if (s == nullptr || !s->is_constant)
    fail(node_label(n), ": its scale is computed at run time; jetplan's INT8 takes constant "
         "scales");
  std::vector<float> out;
  for (double v : read_doubles(*s)) {
    if (!(v > 0.0) || !std::isfinite(v))
      fail(node_label(n), ": scale ", v, " (a scale must be positive and finite)");
    out.push_back(static_cast<float>(v));
  }
  if (out.empty()) fail(node_label(n), ": an empty scale");
  return out;
}

// The zero point must be int8 zeros: jetplan's INT8 is symmetric, as the tensor cores multiply.
void check_zero_point(const Graph& g, const Node& n, DataType quantized) {
  const Value* z = input_value(g, n, 2);
  const DataType type = z != nullptr ? z->dtype : quantized;
  const char* fix = " (jetplan's INT8 is int8 with zero point 0, symmetric, as TensorRT's: "
                    "quantize with symmetric int8 activations and weights, e.g. onnxruntime's "
                    "QuantType.QInt8 with ActivationSymmetric and WeightSymmetric)";
  if (type != DataType::kInt8)
    fail(node_label(n), ": quantizes to ", dtype_name(type), fix);
  if (z == nullptr) return;
  if (!z->is_constant) fail(node_label(n), ": its zero point is computed at run time", fix);
  for (int64_t v : read_ints(*z))
    if (v != 0) fail(node_label(n), ": zero point ", v, fix);
}

// Per-output-channel scales of a weight of `shape` quantized along `axis` (one scale: every
// channel); empty where they are not along the output channels (axis 0) of a conv-like weight.
std::vector<float> weight_scales(const Node& n, const Shape& shape, std::vector<float> scales) {
  if (scales.size() == 1) return scales;
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  if (axis != 0 || shape.empty() || static_cast<int64_t>(scales.size()) != shape[0]) return {};
  return scales;
}

// Whether every reader of Q node q's output is a DequantizeLinear with q's scale and zero point.
bool is_pair(const Graph& g, const Node& q, const std::vector<std::vector<int>>& readers) {
  if (q.outputs.empty() || q.outputs[0] < 0 || readers[q.outputs[0]].empty() ||
      g.values[q.outputs[0]].graph_output)
    return false;
  for (int r : readers[q.outputs[0]]) {
    const Node& dq = g.nodes[r];
    if (!is_op(dq, "DequantizeLinear") || dq.inputs[0] != q.outputs[0]) return false;
    for (size_t k = 1; k < 3; ++k) {
      const Value* a = input_value(g, q, k);
      const Value* b = input_value(g, dq, k);
      if ((a == nullptr) != (b == nullptr)) return false;
      if (a != nullptr && (a != b && (!a->is_constant || !b->is_constant ||
                                      read_doubles(*a) != read_doubles(*b))))
        return false;
    }
    if (attr_int(dq, "axis", 1) != attr_int(q, "axis", 1)) return false;
  }
  return true;
}

}  // namespace

bool has_qdq_pairs(const Graph& g) {
  const std::vector<std::vector<int>> readers = g.consumers();
  for (const Node& n : g.nodes)
    if (is_op(n, "QuantizeLinear") && is_pair(g, n, readers)) return true;
  return false;
}

ExplicitScales remove_qdq_pairs(Graph& g) {
  ExplicitScales out;
  const std::vector<std::vector<int>> readers = g.consumers();
  for (Node& q : g.nodes) {
    if (!is_op(q, "QuantizeLinear") || !is_pair(g, q, readers)) continue;
    const int x = q.inputs[0];
    const std::vector<float> scales = scales_of(g, q);
    check_zero_point(g, q, DataType::kUInt8);
    if (g.values[x].is_constant) {  // a float weight behind a pair (QAT)
      const std::vector<float> w = weight_scales(q, g.values[x].shape, scales);
      if (!w.empty()) out.weights.emplace(g.values[x].name, w);
    } else if (scales.size() != 1) {
      fail(node_label(q), ": ", scales.size(), " scales for an activation (jetplan's INT8 "
           "takes one scale per activation tensor)");
    }
    for (int r : readers[q.outputs[0]]) {
      Node& dq = g.nodes[r];
      const int y = dq.outputs[0];
      // The graph's output keeps its name: x takes it (x is internal to the graph).
      if (g.values[y].graph_output && g.values[x].graph_input < 0 && !g.values[x].graph_output &&
          !g.values[x].is_constant)
        g.values[x].name = g.values[y].name;
      g.replace_uses(y, x);
      dq.dead = true;
    }
    q.dead = true;
    if (!g.values[x].is_constant) {
      out.activations.emplace(g.values[x].name, scales[0]);
      ++out.pairs;
    }
  }
  // Weights given as integers: DequantizeLinear of an int8 constant (folded later into q * s).
  for (const Node& dq : g.nodes) {
    if (!is_op(dq, "DequantizeLinear")) continue;
    const Value* q = input_value(g, dq, 0);
    if (q == nullptr || !q->is_constant || q->dtype == DataType::kInt32) continue;  // int32: a bias
    check_zero_point(g, dq, q->dtype);
    const std::vector<float> w = weight_scales(dq, q->shape, scales_of(g, dq));
    if (!w.empty() && dq.outputs[0] >= 0) out.weights.emplace(g.values[dq.outputs[0]].name, w);
  }
  g.compact();
  return out;
}

bool fuse_int8_range_clip(OpDesc* op, float lo, float hi) {
  const fb::OpFamily f = op->family;
  if (f != fb::OpFamily::Conv && f != fb::OpFamily::Gemm && f != fb::OpFamily::Binary)
    return false;
  if (op->residual_after_act) return false;  // the activation is not the step's last operation
  ActivationDesc& act = op->act;
  float a = lo, b = hi;
  if (act.kind == fb::ActivationKind::Relu) {
    a = std::max(0.f, lo);
  } else if (act.kind == fb::ActivationKind::Clip) {
    a = std::max(act.alpha, lo);
    b = std::min(act.beta, hi);
  } else if (act.kind != fb::ActivationKind::None) {
    return false;
  }
  if (a > b) return false;
  act = {fb::ActivationKind::Clip, a, b};
  return true;
}

}  // namespace jetplan::converter
