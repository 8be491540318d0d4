// Constant folding: shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains)
// and weight preprocessing that exporters leave in the graph are evaluated at conversion, so
// the plan only holds steps on run-time data. This file: the rule table and the passes;
// the evaluators are in fold_moves.cc (data movement and shape ops, dtype-agnostic byte moves)
// and fold_arith.cc (numeric ops), the shared attribute rules in fold_specs.cc.
#include <algorithm>
#include <string>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/passes/passes.h"
#include "converter/src/ir/sorted_names.h"

namespace jetplan::converter {
namespace fold {
namespace {

struct Rule {
  const char* op_type;
  Evaluator eval;
  int min_inputs;   // required inputs; the evaluator may read optional ones past these
  bool shape_only;  // reads only its first input's shape, not its data
};

// Sorted by op type (checked below), searched by binary search.
constexpr Rule kRules[] = {
    {"Abs", eval_unary, 1, false},
    {"Acos", eval_unary, 1, false},
    {"Acosh", eval_unary, 1, false},
    {"Add", eval_binary, 2, false},
    {"And", eval_elementwise, 2, false},
    {"Asin", eval_unary, 1, false},
    {"Asinh", eval_unary, 1, false},
    {"Atan", eval_unary, 1, false},
    {"Atanh", eval_unary, 1, false},
    {"BlackmanWindow", eval_window, 1, false},
    {"Cast", eval_cast, 1, false},
    {"CastLike", eval_cast, 2, false},
    {"Ceil", eval_unary, 1, false},
    {"Concat", eval_concat, 1, false},
    {"Constant", eval_constant, 0, false},
    {"ConstantOfShape", eval_constant_of_shape, 1, false},
    {"Cos", eval_unary, 1, false},
    {"Cosh", eval_unary, 1, false},
    {"CumProd", eval_cum_sum, 2, false},
    {"CumSum", eval_cum_sum, 2, false},
    {"DepthToSpace", eval_space_depth, 1, false},
    {"Div", eval_binary, 2, false},
    {"Dropout", eval_identity, 1, false},
    {"Equal", eval_elementwise, 2, false},
    {"Erf", eval_unary, 1, false},
    {"Exp", eval_unary, 1, false},
    {"Expand", eval_expand, 2, false},
    {"Flatten", eval_reshape_like, 1, false},
    {"Floor", eval_unary, 1, false},
    {"Gather", eval_gather, 2, false},
    {"GatherElements", eval_gather_elements, 2, false},
    {"Greater", eval_elementwise, 2, false},
    {"GreaterOrEqual", eval_elementwise, 2, false},
    {"HammingWindow", eval_window, 1, false},
    {"HannWindow", eval_window, 1, false},
    {"Identity", eval_identity, 1, false},
    {"IsInf", eval_unary, 1, false},
    {"IsNaN", eval_unary, 1, false},
    {"Less", eval_elementwise, 2, false},
    {"LessOrEqual", eval_elementwise, 2, false},
    {"Log", eval_unary, 1, false},
    {"Max", eval_binary, 1, false},
    {"Mean", eval_variadic, 1, false},
    {"MelWeightMatrix", eval_mel_weight_matrix, 5, false},
    {"Min", eval_binary, 1, false},
    {"Mish", eval_unary, 1, false},
    {"Mod", eval_elementwise, 2, false},
    {"Mul", eval_binary, 2, false},
    {"Neg", eval_unary, 1, false},
    {"Not", eval_unary, 1, false},
    {"Or", eval_elementwise, 2, false},
    {"Pad", eval_pad, 1, false},
    {"Pow", eval_binary, 2, false},
    {"Range", eval_range, 3, false},
    {"Reciprocal", eval_unary, 1, false},
    {"ReduceL1", eval_reduce, 1, false},
    {"ReduceL2", eval_reduce, 1, false},
    {"ReduceLogSum", eval_reduce, 1, false},
    {"ReduceLogSumExp", eval_reduce, 1, false},
    {"ReduceMax", eval_reduce, 1, false},
    {"ReduceMean", eval_reduce, 1, false},
    {"ReduceMin", eval_reduce, 1, false},
    {"ReduceProd", eval_reduce, 1, false},
    {"ReduceSum", eval_reduce, 1, false},
    {"ReduceSumSquare", eval_reduce, 1, false},
    {"Relu", eval_unary, 1, false},
    {"Reshape", eval_reshape_like, 2, false},
    {"Round", eval_unary, 1, false},
    {"Scatter", eval_scatter, 3, false},
    {"ScatterElements", eval_scatter, 3, false},
    {"ScatterND", eval_scatter, 3, false},
    {"Shape", eval_shape, 1, true},
    {"Sigmoid", eval_unary, 1, false},
    {"Sign", eval_unary, 1, false},
    {"Sin", eval_unary, 1, false},
    {"Sinh", eval_unary, 1, false},
    {"Size", eval_size, 1, true},
    {"Slice", eval_slice, 1, false},
    {"Softplus", eval_unary, 1, false},
    {"Softsign", eval_unary, 1, false},
    {"SpaceToDepth", eval_space_depth, 1, false},
    {"Split", eval_split, 1, false},
    {"Sqrt", eval_unary, 1, false},
    {"Squeeze", eval_reshape_like, 1, false},
    {"Sub", eval_binary, 2, false},
    {"Sum", eval_variadic, 1, false},
    {"Tan", eval_unary, 1, false},
    {"Tanh", eval_unary, 1, false},
    {"Tile", eval_tile, 2, false},
    {"Transpose", eval_transpose, 1, false},
    {"Unsqueeze", eval_reshape_like, 1, false},
    {"Where", eval_where, 3, false},
    {"Xor", eval_elementwise, 2, false},
};

static_assert(sorted_by_op_type(kRules), "kRules must be sorted by op type");

const Rule* find_rule(const std::string& op_type) {
  auto it = std::lower_bound(std::begin(kRules), std::end(kRules), op_type,
                             [](const Rule& r, const std::string& op) { return op > r.op_type; });
  return it != std::end(kRules) && op_type == it->op_type ? it : nullptr;
}

}  // namespace
}  // namespace fold

bool can_fold_op(const std::string& op_type) { return fold::find_rule(op_type) != nullptr; }

bool fold_node(Graph& g, Node& node) {
  if (!node.domain.empty()) return false;
  const fold::Rule* rule = fold::find_rule(node.op_type);
  if (rule == nullptr) return false;
  fold::Args args{g, node, {}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] < 0) {
      args.in.push_back(nullptr);
      continue;
    }
    const Value& v = g.values[node.inputs[i]];
    const bool ready =
        rule->shape_only && i == 0 ? v.shape_known : v.is_constant && dtype_size(v.dtype) != 0;
    if (!ready) return false;
    args.in.push_back(&v);
  }
  for (int i = 0; i < rule->min_inputs; ++i)
    if (i >= static_cast<int>(args.in.size()) || args.in[i] == nullptr) return false;
  std::vector<TensorData> results;
  if (!rule->eval(args, &results)) return false;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0 && i >= results.size()) return false;  // an output we cannot make

  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    Value& out = g.values[node.outputs[i]];
    TensorData& r = results[i];
    if (out.shape_known && out.shape != r.shape)
      fail("node ", node_label(node), ": output '", out.name, "' evaluates to shape ",
           shape_str(r.shape), " but the model declares ", shape_str(out.shape));
    if (out.dtype != DataType::kUndefined && out.dtype != r.dtype)
      fail("node ", node_label(node), ": output '", out.name, "' evaluates to ",
           dtype_name(r.dtype), " but the model declares ", dtype_name(out.dtype));
    out.dtype = r.dtype;
    out.shape = std::move(r.shape);
    out.shape_known = true;
    out.is_constant = true;
    out.data = std::move(r.bytes);
    out.producer = -1;
  }
  node.dead = true;
  return true;
}

void remove_identities(Graph& g) {
  for (Node& node : g.nodes) {
    if (node.dead || !node.op.resolved || !node.op.removable) continue;
    const int x = node.inputs[0], y = node.outputs[0];
    Value &in = g.values[x], &out = g.values[y];
    if (!out.graph_output) {
      node.dead = true;
      g.replace_uses(y, x);
    } else if (in.producer >= 0 && !in.graph_output) {
      // The graph output keeps its name: the producer writes it directly.
      node.dead = true;
      Node& producer = g.nodes[in.producer];
      for (int& o : producer.outputs)
        if (o == x) o = y;
      g.replace_uses(x, y);
      out.producer = in.producer;
      in.producer = -1;
    }
    // else: a graph input or a constant that is also a graph output stays a Copy.
  }
  g.compact();
}

void eliminate_dead_nodes(Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    if (!n.dead)
      for (int v : n.inputs)
        if (v >= 0) ++uses[v];
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    if (n.dead) continue;
    bool needed = false;
    for (int v : n.outputs)
      needed = needed || (v >= 0 && (uses[v] > 0 || g.values[v].graph_output));
    if (needed) continue;
    n.dead = true;
    for (int v : n.inputs)
      if (v >= 0) --uses[v];
  }
  g.compact();
}

}  // namespace jetplan::converter
