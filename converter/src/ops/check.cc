// The walk that checks every node of a graph against the op rows (see check.h), and the rules
// every op obeys whatever its check said: the plan's rank limit, the limited dtypes, empty inputs.
#include "converter/src/ops/check.h"

#include <jetplan/jetplan.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "converter/src/import/onnx_definitions.h"
#include "converter/src/ir/error.h"
#include "converter/src/ops/left_out.h"
#include "converter/src/ops/registry.h"
#include "converter/src/passes/passes.h"

namespace jetplan::converter {

namespace {

constexpr size_t kMaxRank = JP_MAX_RANK;

bool input_shapes_known(const Graph& g, const Node& node) {
  for (int v : node.inputs)
    if (v >= 0 && !g.values[v].shape_known) return false;
  return true;
}

// Why a fold-only op (Shape, Gather, Cast, ...) stayed in the graph.
std::string fold_only_reason(const Graph& g, const Node& node) {
  for (int v : node.inputs)
    if (v >= 0 && !g.values[v].is_constant)
      return cat("jetplan folds ", node.op_type, " on constants only; input '", g.values[v].name,
                 "' is computed at run time");
  return cat("jetplan cannot fold this ", node.op_type,
             " (its dtype, attributes or size are not supported)");
}

// The plan's tensors have at most kMaxRank dims (the kernels index with fixed-size arrays).
std::string rank_reason(const Graph& g, const Node& node) {
  for (int v : node.outputs)
    if (v >= 0 && g.values[v].shape.size() > kMaxRank)
      return cat("output '", g.values[v].name, "' has rank ", g.values[v].shape.size(),
                 " (jetplan handles up to ", kMaxRank, ")");
  return "";
}

// The limited dtypes (is_limited_dtype) reach the steps of these ops only: byte movement
// (every dtype by its size) and Cast for all of them; the Elementwise family's integer
// arithmetic and comparisons (kernels/kernels.h) for int16, uint16, uint32 and uint64, not
// bfloat16. Every other op refuses them here, whatever its check function said.
constexpr const char* kMoveAndCastOps[] = {
    "Concat",   "DepthToSpace", "Dropout",   "Expand", "Flatten",      "Gather",   "GatherElements",
    "Identity", "Pad",          "Reshape",   "Slice",  "SpaceToDepth", "Split",    "Squeeze",
    "Tile",     "Transpose",    "Unsqueeze", "Where",  "Cast",         "CastLike",
};
// Integer arithmetic (Pow: the exponent, in float64), bitwise ops and comparisons.
constexpr const char* kIntegerMathOps[] = {
    "Add",  "Div",         "Max",      "Min",        "Mod",        "Mul",
    "Pow",  "Sub",         "Sum",      "Equal",      "Greater",    "GreaterOrEqual",
    "Less", "LessOrEqual", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr",
    "BitwiseXor",
};

std::string limited_dtype_reason(const Graph& g, const Node& node) {
  const auto in = [&](const auto& ops) {
    return std::any_of(std::begin(ops), std::end(ops),
                       [&](const char* op) { return node.op_type == op; });
  };
  const bool takes_bfloat16 = in(kMoveAndCastOps);
  const bool takes_integers = takes_bfloat16 || in(kIntegerMathOps);
  for (const std::vector<int>* ids : {&node.inputs, &node.outputs})
    for (int id : *ids) {
      if (id < 0 || !is_limited_dtype(g.values[id].dtype)) continue;
      const bool bfloat16 = g.values[id].dtype == DataType::kBFloat16;
      if (bfloat16 ? takes_bfloat16 : takes_integers) continue;
      return cat(node.op_type, " on ", dtype_name(g.values[id].dtype), " ('", g.values[id].name,
                 "') is not supported (",
                 bfloat16 ? "bfloat16 goes through data movement and Cast only"
                          : "int16, uint16, uint32 and uint64 go through data movement, Cast, "
                            "integer arithmetic, bitwise ops and comparisons only",
                 ")");
    }
  return "";
}

bool is_empty(const Value& v) {
  return v.shape_known && std::find(v.shape.begin(), v.shape.end(), 0) != v.shape.end();
}

// Empty tensors (a dim of 0) are plan tensors of 0 bytes: a step whose outputs are all empty
// is dropped (drop_empty_steps) and the runtime never runs one. A step that reads an empty
// tensor must therefore write only empty ones; Concat is the exception (its empty inputs are
// dropped, they contribute nothing).
std::string empty_input_reason(const Graph& g, const Node& node) {
  if (node.op_type == "Concat") return "";
  const Value* empty_in = nullptr;
  for (int id : node.inputs)
    if (id >= 0 && is_empty(g.values[id])) empty_in = &g.values[id];
  if (empty_in == nullptr) return "";
  for (int id : node.outputs)
    if (id >= 0 && !is_empty(g.values[id]))
      return cat("input '", empty_in->name, "' is empty (", shape_str(empty_in->shape),
                 ") but output '", g.values[id].name, "' is not (", shape_str(g.values[id].shape),
                 "): jetplan computes nothing from empty tensors");
  return "";
}

// Puts `parts` where node `at` was (it dies) and renumbers the producers from there on: the walk
// of check_support visits them next.
void replace_node(Graph& g, size_t at, std::vector<Node> parts) {
  g.nodes[at].dead = true;
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(at) + 1,
                 std::make_move_iterator(parts.begin()), std::make_move_iterator(parts.end()));
  for (size_t i = at + 1; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].outputs)
      if (v >= 0) g.values[v].producer = static_cast<int>(i);
}

std::string plural(size_t n, const char* what) {
  return cat(n, " unsupported ", what, n == 1 ? "" : "s");
}

}  // namespace

int unread_definition(const std::string& op_type, int opset) {
  const OnnxDefinition* def = newer_definition(op_type, opset);
  const ops::OpRow* row = ops::find_op_row(op_type);
  if (def == nullptr || (row == nullptr && !can_fold_op(op_type))) return 0;
  return def->since_version > (row ? row->reads_opset : 0) ? def->since_version : 0;
}

// Default-domain nodes are read by the definition their model's opset means: an op ONNX added
// after it is not an op of the model, and a definition newer than the one the op's check reads
// (OpRow::reads_opset; none past opset 17 for a fold-only op) is refused, never read with the
// older meaning.
std::string definition_reason(const Graph& g, const Node& node) {
  const int added = first_newer_opset(node.op_type);
  if (added > g.opset)
    return cat(node.op_type, " is not an op of opset ", g.opset, " (ONNX adds it at opset ", added,
               ")");
  const int redefined = unread_definition(node.op_type, g.opset);
  if (redefined == 0) return "";
  const ops::OpRow* row = ops::find_op_row(node.op_type);
  const int reads = row ? row->reads_opset : 0;
  return cat("opset ", redefined, " redefined ", node.op_type, " and jetplan reads ",
             reads ? cat("its definition of opset ", reads)
                   : cat("its definitions up to opset ", kLibOnnxOpset),
             " only (the model imports opset ", g.opset, "; export with opset ", redefined - 1,
             ")");
}

void check_support(Graph& g) {
  std::vector<std::string> bad_inputs, bad_nodes, bad_outputs;
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    if (!is_plan_dtype(v.dtype))
      bad_inputs.push_back(cat("graph input '", v.name, "': ", dtype_name(v.dtype),
                               " is not supported (plans hold ", plan_dtype_list(), ")"));
    else if (v.shape.size() > kMaxRank)
      bad_inputs.push_back(cat("graph input '", v.name, "': rank ", v.shape.size(),
                               " is not supported (jetplan handles up to ", kMaxRank, ")"));
  }
  // By index: a decomposed node's replacements are inserted after it.
  for (size_t at = 0; at < g.nodes.size(); ++at) {
    Node& node = g.nodes[at];
    if (node.dead) continue;
    if (node.domain.empty())
      if (std::string r = definition_reason(g, node); !r.empty()) {
        bad_nodes.push_back(node_label(node) + ": " + r);
        continue;
      }
    if (fold_node(g, node)) continue;
    const ops::OpRow* row = node.domain.empty() ? ops::find_op_row(node.op_type) : nullptr;
    if (row != nullptr && row->decompose != nullptr) {
      if (!input_shapes_known(g, node)) continue;  // fed by an unsupported node, listed already
      std::vector<Node> parts;
      if (std::string r = row->decompose(g, node, &parts); !r.empty()) {
        bad_nodes.push_back(node_label(node) + ": " + r);
        continue;
      }
      if (!parts.empty() || row->check == nullptr) {
        replace_node(g, at, std::move(parts));  // `node` is gone
        continue;
      }
      // Nothing appended by a row that has a check too: the node stays, checked below.
    }
    const CheckFn check = node.domain.empty() ? find_check(node.op_type) : nullptr;
    std::string reason;
    if (check == nullptr && !(node.domain.empty() && can_fold_op(node.op_type))) {
      const char* why = node.domain.empty() ? ops::left_out_reason(node.op_type.c_str()) : nullptr;
      reason = !node.domain.empty() ? cat("no such op in jetplan (domain '", node.domain, "')")
               : why != nullptr      ? cat("no such op in jetplan (", why, ")")
                                     : std::string("no such op in jetplan");
    } else if (!input_shapes_known(g, node)) {
      continue;  // fed by an unsupported node that is listed already
    } else {
      reason = check ? check(g, node) : fold_only_reason(g, node);
      if (reason.empty() && check) reason = rank_reason(g, node);
      if (reason.empty() && check) reason = limited_dtype_reason(g, node);
      if (reason.empty() && check) reason = empty_input_reason(g, node);
    }
    if (!reason.empty()) bad_nodes.push_back(node_label(node) + ": " + reason);
  }
  for (int id : g.outputs) {
    const Value& v = g.values[id];
    if (!is_plan_dtype(v.dtype) && v.dtype != DataType::kUndefined)
      bad_outputs.push_back(cat("graph output '", v.name, "': ", dtype_name(v.dtype),
                                " is not supported (plans hold ", plan_dtype_list(), ")"));
  }
  if (bad_inputs.empty() && bad_nodes.empty() && bad_outputs.empty()) {
    for (const Node& node : g.nodes)
      if (!node.dead && !node.op.resolved)
        fail("internal error: node ", node_label(node), " was neither folded nor resolved");
    return;
  }
  std::string head, items;
  for (const auto& [list, what] :
       {std::pair{&bad_inputs, "graph input"}, std::pair{&bad_nodes, "node"},
        std::pair{&bad_outputs, "graph output"}}) {
    if (list->empty()) continue;
    head += (head.empty() ? "" : ", ") + plural(list->size(), what);
    for (const std::string& item : *list) items += (items.empty() ? "" : "; ") + item;
  }
  fail(head, ": ", items);
}

}  // namespace jetplan::converter
