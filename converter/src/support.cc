#include "converter/src/support.h"

#include <jetplan/jetplan.h>

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "converter/src/convert.h"
#include "converter/src/ir/error.h"
#include "converter/src/passes/passes.h"
#include "converter/src/support_groups.h"
#include "converter/src/support_ops.h"
#include "converter/src/table.h"

namespace jetplan::converter {
namespace support {

bool has_input(const Node& node, size_t i) { return i < node.inputs.size() && node.inputs[i] >= 0; }

const Value& input(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) fail("node ", node_label(node), ": required input ", i, " is missing");
  return g.values[node.inputs[i]];
}

std::string float_inputs(const Graph& g, const Node& node, std::initializer_list<size_t> which) {
  for (size_t i : which) {
    if (!has_input(node, i)) continue;
    const Value& v = g.values[node.inputs[i]];
    if (v.dtype != DataType::kFloat32)
      return cat("input '", v.name, "' is ", dtype_name(v.dtype),
                 " (jetplan computes float32 only)");
  }
  return "";
}

std::string plan_dtype_input(const Graph& g, const Node& node, size_t i) {
  const Value& v = input(g, node, i);
  if (is_plan_dtype(v.dtype)) return "";
  return cat("input '", v.name, "' is ", dtype_name(v.dtype), ", which a plan cannot hold (",
             plan_dtype_list(), ")");
}

std::string extra_outputs_unused(const Graph& g, const Node& node, const char* what) {
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    const int id = node.outputs[i];
    if (id < 0) continue;
    bool used = g.values[id].graph_output;
    for (const Node& other : g.nodes)
      if (!other.dead &&
          std::find(other.inputs.begin(), other.inputs.end(), id) != other.inputs.end())
        used = true;
    if (used) return cat("its ", what, " output '", g.values[id].name, "' is used");
  }
  return "";
}

void set_output(Graph& g, Node& node, const Shape& shape) {
  set_output_typed(g, node, 0, DataType::kFloat32, shape);
}

void set_output_typed(Graph& g, Node& node, size_t index, DataType dtype, const Shape& shape) {
  if (index >= node.outputs.size() || node.outputs[index] < 0)
    fail("node ", node_label(node), ": its output ", index, " has no name");
  Value& out = g.values[node.outputs[index]];
  if (out.shape_known && out.shape != shape)
    fail("node ", node_label(node), ": output '", out.name, "' has shape ", shape_str(shape),
         " by the op's rules, but the model declares ", shape_str(out.shape));
  for (int64_t d : shape)
    if (d < 0) fail("node ", node_label(node), ": output shape ", shape_str(shape), " is invalid");
  if (checked_bytes(shape, dtype_size(dtype)) < 0)
    fail("node ", node_label(node), ": output shape ", shape_str(shape), " is too large");
  out.dtype = dtype;
  out.shape = shape;
  out.shape_known = true;
  node.op.resolved = true;
}

bool constant_scalar(const Graph& g, const Node& node, size_t i, float* out) {
  if (!has_input(node, i)) return false;
  const Value& v = g.values[node.inputs[i]];
  if (!v.is_constant || !is_numeric(v.dtype) || shape_count(v.shape) != 1) return false;
  *out = static_cast<float>(read_doubles(v)[0]);
  return true;
}

}  // namespace support

namespace {

constexpr size_t kMaxRank = JP_MAX_RANK;

struct OpCheck {
  const char* op_type;
  CheckFn check;
  // For SUPPORTED_OPS.md (jetplan-convert --list-ops): the element types the op's steps take,
  // and the restrictions its check function enforces, in one line each.
  const char* dtypes;
  const char* notes;
};

constexpr const char* kFloat = "float32";
// Steps that move bytes (Copy, Concat) take every dtype a plan holds.
constexpr const char* kAnyDtype = "any plan dtype";
constexpr const char* kActivationNotes =
    "fused into the preceding Conv, Gemm or elementwise step where it can be";
constexpr const char* kPoolNotes =
    "1 to 3 spatial dims; ceil_mode=1 only where no window starts inside the end padding";

// The core ops, sorted by op type; the group tables (support_group_*.cc) hold the rest.
// Add, Sub, Mul, Div, Max, Min and Pow are the tensor group's (check_arith, check_pow, every
// dtype), which hand float32 with two inputs back to check_binary here.
constexpr OpCheck kOps[] = {
    {"AveragePool", support::check_pool, kFloat, kPoolNotes},
    {"BatchNormalization", support::check_batchnorm, kFloat,
     "inference only (training_mode=0, no statistics outputs); spatial=1 before opset 9; folded "
     "into the preceding Conv where it can be"},
    {"Clip", support::check_activation, "float32; int8, uint8 (in float32, opset 12 and later)",
     "min and max constant scalars (inputs since opset 11)"},
    {"Concat", support::check_concat, kAnyDtype, "1 to 64 inputs of one dtype"},
    {"Conv", support::check_conv, kFloat,
     "1 to 3 spatial dims; bias, BatchNorm, residual Add and activation fused"},
    {"Dropout", support::check_identity, kAnyDtype,
     "removed (inference); the mask output is a constant of trues; training_mode a constant 0, "
     "or 1 with a constant ratio of 0"},
    {"Elu", support::check_activation, kFloat, kActivationNotes},
    {"Flatten", support::check_reshape, kAnyDtype, ""},
    {"Gemm", support::check_gemm, kFloat, "2-D A and B; C broadcasts to [M, N]"},
    {"GlobalAveragePool", support::check_global_pool, kFloat, "1 to 3 spatial dims"},
    {"GlobalMaxPool", support::check_global_pool, kFloat, "1 to 3 spatial dims"},
    {"HardSigmoid", support::check_activation, kFloat, kActivationNotes},
    {"HardSwish", support::check_activation, kFloat, kActivationNotes},
    {"Identity", support::check_identity, kAnyDtype, "removed"},
    {"LeakyRelu", support::check_activation, kFloat, kActivationNotes},
    {"LogSoftmax", support::check_softmax, kFloat,
     "before opset 13 (2-D flattening at axis) through a 2-D view"},
    {"MatMul", support::check_matmul, kFloat,
     "numpy semantics: 1-D operands, broadcast batch dims"},
    {"MaxPool", support::check_pool, "float32; int8, uint8 (in float32)",
     "1 to 3 spatial dims; the Indices output (storage_order 0 or 1) on the CPU backend only; "
     "ceil_mode=1 only where no window starts inside the end padding"},
    {"PRelu", support::check_prelu, kFloat,
     "the slope broadcasts to X (unidirectional); a Binary step, fused with a following "
     "activation"},
    {"Relu", support::check_activation, kFloat, kActivationNotes},
    {"Reshape", support::check_reshape, kAnyDtype,
     "shape input constant (after folding)"},
    {"Selu", support::check_activation, kFloat, kActivationNotes},
    {"Sigmoid", support::check_activation, kFloat, kActivationNotes},
    {"Softmax", support::check_softmax, kFloat,
     "before opset 13 (2-D flattening at axis) through a 2-D view"},
    {"Squeeze", support::check_reshape, kAnyDtype, "axes constant (after folding)"},
    {"Tanh", support::check_activation, kFloat, kActivationNotes},
    {"Unsqueeze", support::check_reshape, kAnyDtype, "axes constant (after folding)"},
};
static_assert(sorted_by_op_type(kOps), "kOps must be sorted by op type");

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

// The CPU-only dtypes (is_cpu_only_dtype) reach the steps of these ops only: byte movement
// (every dtype by its size) and Cast for all of them; the Elementwise family's integer
// arithmetic and comparisons (kernels/params_tensor.h) for int16, uint16, uint32 and uint64, not
// bfloat16. Every other op refuses them here, whatever its check function said.
constexpr const char* kMoveAndCastOps[] = {
    "Concat", "DepthToSpace", "Dropout", "Expand", "Flatten", "Gather", "GatherElements",
    "Identity", "Pad", "Reshape", "Slice", "SpaceToDepth", "Split", "Squeeze", "Tile",
    "Transpose", "Unsqueeze", "Where", "Cast", "CastLike",
};
// Integer arithmetic (Pow: the exponent, in float64) and comparisons.
constexpr const char* kIntegerMathOps[] = {
    "Add", "Div", "Max", "Min", "Mod", "Mul", "Pow", "Sub", "Sum", "Equal", "Greater",
    "GreaterOrEqual", "Less", "LessOrEqual",
};

std::string cpu_only_dtype_reason(const Graph& g, const Node& node) {
  const auto in = [&](const auto& ops) {
    return std::any_of(std::begin(ops), std::end(ops),
                       [&](const char* op) { return node.op_type == op; });
  };
  const bool takes_bfloat16 = in(kMoveAndCastOps);
  const bool takes_integers = takes_bfloat16 || in(kIntegerMathOps);
  for (const std::vector<int>* ids : {&node.inputs, &node.outputs})
    for (int id : *ids) {
      if (id < 0 || !is_cpu_only_dtype(g.values[id].dtype)) continue;
      const bool bfloat16 = g.values[id].dtype == DataType::kBFloat16;
      if (bfloat16 ? takes_bfloat16 : takes_integers) continue;
      return cat(node.op_type, " on ", dtype_name(g.values[id].dtype), " ('", g.values[id].name,
                 "') is not supported (",
                 bfloat16 ? "bfloat16 goes through data movement and Cast only"
                          : "int16, uint16, uint32 and uint64 go through data movement, Cast, "
                            "integer arithmetic and comparisons only",
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

std::string plural(size_t n, const char* what) {
  return cat(n, " unsupported ", what, n == 1 ? "" : "s");
}

}  // namespace

CheckFn find_check(const std::string& op_type) {
  auto it =
      std::lower_bound(std::begin(kOps), std::end(kOps), op_type,
                       [](const OpCheck& e, const std::string& op) { return op > e.op_type; });
  if (it != std::end(kOps) && op_type == it->op_type) return it->check;
  for (CheckFn (*group)(const std::string&) : {find_check_nn, find_check_tensor, find_check_seq})
    if (CheckFn check = group(op_type)) return check;
  return nullptr;
}

OpSupport describe_op(const std::string& op_type) {
  OpSupport out;
  out.folds = can_fold_op(op_type);
  auto it =
      std::lower_bound(std::begin(kOps), std::end(kOps), op_type,
                       [](const OpCheck& e, const std::string& op) { return op > e.op_type; });
  if (it != std::end(kOps) && op_type == it->op_type) {
    out.runs = true;
    out.table = "core";
    out.dtypes = it->dtypes;
    out.notes = it->notes;
    return out;
  }
  struct Group {
    const char* name;
    CheckFn (*find)(const std::string&);
    bool (*doc)(const std::string&, OpDoc*);
  };
  const Group groups[] = {{"nn", find_check_nn, find_doc_nn},
                          {"tensor", find_check_tensor, find_doc_tensor},
                          {"seq", find_check_seq, find_doc_seq}};
  for (const Group& group : groups)
    if (group.find(op_type) != nullptr) {
      out.runs = true;
      out.table = group.name;
      OpDoc doc;
      if (group.doc(op_type, &doc)) {
        out.dtypes = doc.dtypes;
        out.notes = doc.notes;
      }
      return out;
    }
  return out;
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
  for (Node& node : g.nodes) {
    if (node.dead || fold_node(g, node)) continue;
    const CheckFn check = node.domain.empty() ? find_check(node.op_type) : nullptr;
    std::string reason;
    if (check == nullptr && !(node.domain.empty() && can_fold_op(node.op_type))) {
      reason = node.domain.empty() ? "no such op in jetplan"
                                   : cat("no such op in jetplan (domain '", node.domain, "')");
    } else if (!input_shapes_known(g, node)) {
      continue;  // fed by an unsupported node that is listed already
    } else {
      reason = check ? check(g, node) : fold_only_reason(g, node);
      if (reason.empty() && check) reason = rank_reason(g, node);
      if (reason.empty() && check) reason = cpu_only_dtype_reason(g, node);
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
