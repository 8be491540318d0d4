// Pointwise chain fusion: a connected group of float elementwise nodes (Binary, Activation,
// float Unary math) whose intermediates each have one reader and are no graph outputs becomes
// one Pointwise node running a small program (schemas/plan.fbs PointwiseParams). The group's
// external inputs (run-time tensors and constants) become the step's inputs, each broadcast to
// the output by the kernel; the intermediates never reach memory.
//
// Only intermediates of the output's shape join a group: a smaller one (a per-channel gate,
// say) would be recomputed for every output element. Groups grow from their last node (the
// root) back through its operands, in operand order, while the program stays within the
// kernel's limits (kMaxPointwiseInputs inputs, kMaxPointwiseInstrs instructions); a node that
// would not fit becomes an external input and may root a group of its own. A lone node stays
// the step it was: fusing it would gain nothing.
#include <algorithm>

#include "converter/src/ir/error.h"
#include "converter/src/ops/registry.h"
#include "converter/src/passes/passes.h"
#include "kernels/kernels.h"

namespace jetplan::converter {
namespace {

// The instruction a node of `family` becomes in a Pointwise program (the family's rules, Load:
// it joins no chain).
fb::PointwiseInstrKind instr_kind(fb::OpFamily family) {
  return ops::family_rules(family).pointwise;
}

// Instructions a node takes in the program; 0 when it cannot join a chain.
int node_instrs(const Graph& g, const Node& n) {
  if (n.dead || !n.op.resolved || n.op.expand != Expansion::kNone) return 0;
  if (n.outputs.size() != 1 || n.outputs[0] < 0 || n.op.count_output) return 0;
  size_t arity = 0;
  int instrs = 1;
  switch (instr_kind(n.op.family)) {
    case fb::PointwiseInstrKind::Binary:
      arity = 2;
      if (n.op.act.kind != fb::ActivationKind::None) instrs = 2;
      break;
    case fb::PointwiseInstrKind::Activation:
      arity = 1;
      break;
    case fb::PointwiseInstrKind::Unary:
      arity = 1;
      if (kernels::unary_is_predicate(static_cast<kernels::UnaryOp>(n.op.unary))) return 0;
      break;
    case fb::PointwiseInstrKind::Load:
      return 0;
  }
  if (n.inputs.size() != arity) return 0;
  for (int v : n.inputs) {
    if (v < 0 || g.values[v].dtype != DataType::kFloat32 || !g.values[v].shape_known) return 0;
  }
  const Value& y = g.values[n.outputs[0]];
  return y.dtype == DataType::kFloat32 && y.shape_known ? instrs : 0;
}

class ChainFusion {
 public:
  explicit ChainFusion(Graph& g)
      : g_(g), readers_(g.consumers()), claimed_(g.nodes.size(), false) {}

  void run() {
    for (size_t i = g_.nodes.size(); i-- > 0;) {
      if (claimed_[i] || node_instrs(g_, g_.nodes[i]) == 0) continue;
      std::vector<int> members = grow(static_cast<int>(i));
      if (members.size() < 2) continue;
      for (int m : members) claimed_[m] = true;
      fuse_group(static_cast<int>(i), members);
    }
    g_.compact();
  }

 private:
  bool is_member(const std::vector<int>& members, int node) const {
    return std::find(members.begin(), members.end(), node) != members.end();
  }

  // The group's external inputs (values read by members that no member writes), in the order
  // the program loads them, and its instruction count.
  void measure(const std::vector<int>& members, std::vector<int>* externals, int* instrs) const {
    externals->clear();
    *instrs = 0;
    walk(members, members[0], externals, instrs);
    *instrs += static_cast<int>(externals->size());
  }
  void walk(const std::vector<int>& members, int node, std::vector<int>* externals,
            int* instrs) const {
    const Node& n = g_.nodes[node];
    for (int v : n.inputs) {
      const int p = g_.values[v].producer;
      if (p >= 0 && is_member(members, p)) {
        walk(members, p, externals, instrs);
      } else if (std::find(externals->begin(), externals->end(), v) == externals->end()) {
        externals->push_back(v);
      }
    }
    *instrs += node_instrs(g_, n);
  }

  bool fits(const std::vector<int>& members) const {
    std::vector<int> externals;
    int instrs = 0;
    measure(members, &externals, &instrs);
    return externals.size() <= static_cast<size_t>(kernels::kMaxPointwiseInputs) &&
           instrs <= kernels::kMaxPointwiseInstrs;
  }

  // members[0] is the root; the others join in the order they are reached.
  std::vector<int> grow(int root) {
    std::vector<int> members = {root};
    const Shape& shape = g_.values[g_.nodes[root].outputs[0]].shape;
    for (size_t at = 0; at < members.size(); ++at) {
      const std::vector<int> inputs = g_.nodes[members[at]].inputs;
      for (int v : inputs) {
        const Value& value = g_.values[v];
        const int p = value.producer;
        if (p < 0 || claimed_[p] || is_member(members, p) || value.graph_output ||
            value.shape != shape || readers_[v].size() != 1 || node_instrs(g_, g_.nodes[p]) == 0)
          continue;
        members.push_back(p);
        if (!fits(members)) members.pop_back();
      }
    }
    return members;
  }

  // Emits the program of the node and the members it reads; returns its result register.
  uint8_t emit(const std::vector<int>& members, int node, const std::vector<int>& externals,
               std::vector<fb::PointwiseInstr>* program, std::vector<int>* loaded,
               std::vector<uint8_t>* load_reg, std::string* name) {
    const Node& n = g_.nodes[node];
    uint8_t src[2] = {0, 0};
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int v = n.inputs[k];
      const int p = g_.values[v].producer;
      if (p >= 0 && is_member(members, p)) {
        src[k] = emit(members, p, externals, program, loaded, load_reg, name);
        continue;
      }
      const auto at = std::find(loaded->begin(), loaded->end(), v);
      if (at != loaded->end()) {
        src[k] = (*load_reg)[static_cast<size_t>(at - loaded->begin())];
        continue;
      }
      const auto index = std::find(externals.begin(), externals.end(), v) - externals.begin();
      src[k] = static_cast<uint8_t>(program->size());
      program->emplace_back(fb::PointwiseInstrKind::Load, static_cast<uint8_t>(index), 0, 0,
                            fb::Activation());
      loaded->push_back(v);
      load_reg->push_back(src[k]);
    }
    auto next = [&] { return static_cast<uint8_t>(program->size()); };
    const fb::Activation act(n.op.act.kind, n.op.act.alpha, n.op.act.beta);
    switch (instr_kind(n.op.family)) {
      case fb::PointwiseInstrKind::Binary:
        program->emplace_back(fb::PointwiseInstrKind::Binary, static_cast<uint8_t>(n.op.binary),
                              src[0], src[1], fb::Activation());
        if (n.op.act.kind != fb::ActivationKind::None)
          program->emplace_back(fb::PointwiseInstrKind::Activation, 0,
                                static_cast<uint8_t>(next() - 1), 0, act);
        break;
      case fb::PointwiseInstrKind::Unary:
        program->emplace_back(fb::PointwiseInstrKind::Unary,
                              static_cast<uint8_t>(n.op.unary), src[0], 0,
                              fb::Activation());
        break;
      case fb::PointwiseInstrKind::Activation:
        program->emplace_back(fb::PointwiseInstrKind::Activation, 0, src[0], 0, act);
        break;
      case fb::PointwiseInstrKind::Load:  // node_instrs admits no such node into a chain
        fail("internal error: node ", node_label(n), " of family ",
             fb::EnumNameOpFamily(n.op.family), " in a Pointwise chain");
    }
    *name += (name->empty() ? "" : "+") + n.name;
    return static_cast<uint8_t>(next() - 1);
  }

  void fuse_group(int root, const std::vector<int>& members) {
    std::vector<int> externals;
    int instrs = 0;
    measure(members, &externals, &instrs);
    Node fused;
    fused.op_type = "Pointwise";
    fused.inputs = externals;
    fused.outputs = g_.nodes[root].outputs;
    fused.op.resolved = true;
    fused.op.family = fb::OpFamily::Pointwise;
    std::vector<int> loaded;
    std::vector<uint8_t> load_reg;
    emit(members, root, externals, &fused.op.pointwise, &loaded, &load_reg, &fused.name);
    for (int m : members) {
      g_.nodes[m] = Node();
      g_.nodes[m].dead = true;
    }
    // The root ran after every member and after every producer of an external input.
    g_.nodes[root] = std::move(fused);
  }

  Graph& g_;
  std::vector<std::vector<int>> readers_;
  std::vector<bool> claimed_;
};

}  // namespace

void fuse_pointwise(Graph& g) { ChainFusion(g).run(); }

}  // namespace jetplan::converter
