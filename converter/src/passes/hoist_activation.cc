// An activation after data movement moves into the Convs and Gemms that produce the data
// (passes.h, hoist_activations): YOLO-style heads end in Sigmoid(Concat(flatten(permute(
// reshape(Conv_i(x)))))); each head conv then applies the Sigmoid in its epilogue, and the
// Concat, Transposes and reshapes only move the results (GPU plans write them in place).
#include <vector>

#include "converter/src/passes/passes.h"

namespace jetplan::converter {
namespace {

// The nodes an activation of `value` can move into: each Conv or Gemm without an activation of
// its own (nor a residual after one) that writes the data `value` moves, through Concats,
// Transposes and Copies (reshapes), every value on the way read by one node alone and no graph
// output. False where any part of `value` comes from elsewhere.
bool producers_to_activate(const Graph& g, const std::vector<std::vector<int>>& readers,
                           int value, std::vector<int>* found) {
  const Value& v = g.values[value];
  if (v.producer < 0 || v.graph_output || readers[value].size() != 1 || found->size() > 64)
    return false;
  const Node& p = g.nodes[v.producer];
  if (p.dead || !p.op.resolved || p.op.expand != Expansion::kNone || p.outputs.size() != 1)
    return false;
  switch (p.op.family) {
    case fb::OpFamily::Conv:
    case fb::OpFamily::Gemm:
      if (p.op.act.kind != fb::ActivationKind::None || p.op.residual_after_act) return false;
      found->push_back(v.producer);
      return true;
    case fb::OpFamily::Concat:
    case fb::OpFamily::Transpose:
    case fb::OpFamily::Copy:
      for (int in : p.inputs) {
        if (in < 0 || g.values[in].dtype != v.dtype ||
            !producers_to_activate(g, readers, in, found))
          return false;
      }
      return !p.inputs.empty();
    default:
      return false;
  }
}

}  // namespace

void hoist_activations(Graph& g) {
  const std::vector<std::vector<int>> readers = g.consumers();
  for (size_t a = 0; a < g.nodes.size(); ++a) {
    Node& act = g.nodes[a];
    if (act.dead || !act.op.resolved || act.op.family != fb::OpFamily::Activation ||
        act.op.expand != Expansion::kNone || act.inputs.size() != 1 || act.outputs.size() != 1)
      continue;
    const int moved = act.inputs[0];
    std::vector<int> producers;
    if (!producers_to_activate(g, readers, moved, &producers)) continue;
    // A Conv that the activation's input comes straight out of: fuse() has taken such pairs.
    if (g.values[moved].producer == producers.front() && producers.size() == 1) continue;
    for (int p : producers) {
      g.nodes[p].op.act = act.op.act;
      g.nodes[p].name += "+" + act.name;
    }
    // The last mover writes the activation's output (its name is kept: it may be the graph's).
    Node& last = g.nodes[g.values[moved].producer];
    last.outputs[0] = act.outputs[0];
    g.values[act.outputs[0]].producer = g.values[moved].producer;
    g.values[moved].producer = -1;
    act.dead = true;
  }
}

}  // namespace jetplan::converter
