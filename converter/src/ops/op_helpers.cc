// What the op checks share (see op_helpers.h).
#include "converter/src/ops/op_helpers.h"

#include <algorithm>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"

namespace jetplan::converter::ops {

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

std::string plan_input(const Graph& g, const Node& node, PlanInput* x) {
  const Value& v = input(g, node, 0);
  if (std::string r = plan_dtype_reason(v); !r.empty()) return r;
  *x = {v.dtype, v.shape};
  return "";
}

std::string plan_dtype_input(const Graph& g, const Node& node, size_t i) {
  return plan_dtype_reason(input(g, node, i));
}

std::string extra_outputs_unused(const Graph& g, const Node& node, const char* what) {
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (is_used(g, node.outputs[i]))
      return cat("its ", what, " output '", g.values[node.outputs[i]].name, "' is used");
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

std::string plan_dtype_reason(const Value& v) {
  if (is_plan_dtype(v.dtype)) return "";
  return cat("input '", v.name, "' is ", dtype_name(v.dtype), ", which a plan cannot hold (",
             plan_dtype_list(), ")");
}

std::string same_dtype_reason(const Graph& g, const Node& node) {
  DataType first = DataType::kUndefined;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!has_input(node, i)) continue;
    const Value& v = g.values[node.inputs[i]];
    if (std::string r = plan_dtype_reason(v); !r.empty()) return r;
    if (first == DataType::kUndefined) first = v.dtype;
    if (v.dtype != first)
      return cat("inputs differ in dtype (", dtype_name(first), " and ", dtype_name(v.dtype), ")");
  }
  return "";
}

std::string not_float(const Value& v, const char* role) {
  return cat(role, " '", v.name, "' is ", dtype_name(v.dtype), " (jetplan needs float32)");
}

std::string run_time_reason(const char* what) {
  return cat("its ", what, " input is computed at run time (jetplan needs it constant)");
}

bool is_used(const Graph& g, int id) {
  if (id < 0) return false;
  if (g.values[id].graph_output) return true;
  for (const Node& n : g.nodes)
    if (!n.dead && std::find(n.inputs.begin(), n.inputs.end(), id) != n.inputs.end()) return true;
  return false;
}

std::string resolve_as(Graph& g, Node& node, fb::OpFamily family, const Shape& shape) {
  return resolve_as(g, node, family, DataType::kFloat32, shape);
}

std::string resolve_as(Graph& g, Node& node, fb::OpFamily family, DataType dtype,
                       const Shape& shape) {
  node.op.family = family;
  set_output_typed(g, node, 0, dtype, shape);
  return "";
}

std::string resolve_as_copy(Graph& g, Node& node, DataType dtype, const Shape& shape) {
  node.op.removable = true;
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Copy, dtype, shape);
}

std::vector<int32_t> resolve_axes(const Node& node, const std::vector<int64_t>& axes,
                                  int64_t rank) {
  std::vector<int32_t> out;
  for (int64_t a : axes) out.push_back(static_cast<int32_t>(normalize_axis(node, a, rank)));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    fail("node ", node_label(node), ": axes ", shape_str(axes), " name a dim twice");
  return out;
}

std::string gather_inputs_reason(const Value& data, const Value& indices) {
  if (std::string r = plan_dtype_reason(data); !r.empty()) return r;
  if (indices.dtype == DataType::kInt32 || indices.dtype == DataType::kInt64) return "";
  return cat("indices '", indices.name, "' are ", dtype_name(indices.dtype),
             " (jetplan gathers with int32 or int64 indices)");
}

void check_constant_indices(const Node& node, const Value& indices, int64_t dim) {
  if (!indices.is_constant) return;
  for (int64_t i : read_ints(indices))
    if (i < -dim || i >= dim)
      fail("node ", node_label(node), ": index ", i, " is out of range for dim ", dim);
}

}  // namespace jetplan::converter::ops
