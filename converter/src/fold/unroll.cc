// Loop and Scan unrolled (control_flow.h): the body once per iteration, its carried values
// threaded from one copy to the next, its scan outputs stacked by Unsqueeze + Concat.
#include <algorithm>
#include <string>
#include <vector>

#include "converter/src/fold/control_flow.h"
#include "converter/src/fold/subgraph.h"
#include "converter/src/ir/error.h"

namespace jetplan::converter::fold {
namespace {

Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

// `x` with a new dim of 1 at `axis`, written to value `out` (Unsqueeze in the form of the
// model's opset: axes as an input from opset 13, as an attribute before).
void unsqueeze(Expansion& e, int x, int64_t axis, int out, const std::string& name) {
  Graph& g = e.graph();
  if (g.opset >= 13) {
    const int axes = e.add_constant(name + "_axes", DataType::kInt64, {1},
                                    write_ints(DataType::kInt64, {axis}));
    e.add_node("Unsqueeze", name, {x, axes}, {out});
    return;
  }
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = {axis};
  e.add_node("Unsqueeze", name, {x}, {out}).attrs["axes"] = a;
}

// The per-iteration values of one scan output stacked along a new dim `axis` into `out`.
void stack(Expansion& e, const std::vector<int>& parts, int64_t axis, int out,
           const std::string& name) {
  if (parts.size() == 1) {
    unsqueeze(e, parts[0], axis, out, name + "/unsqueeze");
    return;
  }
  std::vector<int> unsqueezed;
  for (size_t t = 0; t < parts.size(); ++t) {
    const DataType dtype = e.graph().values[parts[t]].dtype;
    const int u = e.add_value(cat(name, "/", t), dtype);
    unsqueeze(e, parts[t], axis, u, cat(name, "/unsqueeze_", t));
    unsqueezed.push_back(u);
  }
  e.add_node("Concat", name + "/concat", unsqueezed, {out}).attrs["axis"] = int_attr(axis);
}

// One element (in [0, 1], e.g. a bool or an int64 scalar) of a constant.
int64_t scalar_of(const Graph& g, const Node& node, int value, const char* what) {
  const std::vector<int64_t> v = read_ints(g.values[value]);
  if (v.size() != 1)
    fail("node ", node_label(node), ": its ", what, " '", g.values[value].name, "' holds ",
         v.size(), " elements (it takes one)");
  return v[0];
}

}  // namespace

std::string unroll_loop(Expansion& e) {
  Graph& g = e.graph();
  const Node& node = e.node();
  const Graph& body = subgraph(node, "body");
  if (node.inputs.size() < 2 || body.inputs.size() != node.inputs.size() ||
      body.outputs.size() != node.outputs.size() + 1 || body.outputs.size() + 1 < body.inputs.size())
    fail("node ", node_label(node), ": Loop has ", node.inputs.size(), " inputs and ",
         node.outputs.size(), " outputs, its body ", body.inputs.size(), " inputs and ",
         body.outputs.size(), " outputs (the body takes the iteration number, the condition and "
         "each carried value, and returns the condition, each carried value and the scan outputs)");
  const size_t carried_count = node.inputs.size() - 2;
  const size_t scan_count = node.outputs.size() - carried_count;
  int64_t trips = -1;  // no trip count: the condition alone ends the loop
  if (node.inputs[0] >= 0) {
    if (!g.values[node.inputs[0]].is_constant)
      return run_time_reason(g, "trip count", node.inputs[0]);
    trips = std::max<int64_t>(0, scalar_of(g, node, node.inputs[0], "trip count"));
    if (trips > kMaxUnrolledIterations)
      return cat("its trip count is ", trips, ", more than the ", kMaxUnrolledIterations,
                 " iterations jetplan unrolls");
  }
  bool go = true;
  if (node.inputs[1] >= 0) {
    if (!g.values[node.inputs[1]].is_constant)
      return run_time_reason(g, "condition", node.inputs[1]);
    go = scalar_of(g, node, node.inputs[1], "condition") != 0;
  }
  const std::string name = node.name;
  const std::vector<int> outputs = node.outputs;
  std::vector<int> carried(node.inputs.begin() + 2, node.inputs.end());
  std::vector<std::vector<int>> scans(scan_count);
  int64_t t = 0;
  while (go && (trips < 0 || t < trips)) {
    if (t == kMaxUnrolledIterations)
      return cat("it has no trip count, and its body's condition is still true after ",
                 kMaxUnrolledIterations, " iterations (jetplan unrolls at most ",
                 kMaxUnrolledIterations, ")");
    const std::string prefix = cat(name, "/", t, "/");
    std::vector<int> in = {e.add_int64_scalar(prefix + "iteration", t),
                           e.add_constant(prefix + "condition", DataType::kBool, {}, {1})};
    in.insert(in.end(), carried.begin(), carried.end());
    const std::vector<int> out = e.inline_graph(body, in, prefix);
    carried.assign(out.begin() + 1, out.begin() + 1 + static_cast<std::ptrdiff_t>(carried_count));
    for (size_t k = 0; k < scan_count; ++k) scans[k].push_back(out[1 + carried_count + k]);
    ++t;
    if (trips >= 0 && t >= trips) break;
    e.fold_added();
    if (!g.values[out[0]].is_constant)
      return cat("its body's condition '", g.values[out[0]].name,
                 "' is computed at run time: an early exit that depends on run-time values, "
                 "which jetplan cannot unroll");
    go = scalar_of(g, e.node(), out[0], "body's condition") != 0;
  }
  if (t == 0 && scan_count > 0)
    return "it runs no iteration, and jetplan cannot make its scan outputs empty";
  for (size_t k = 0; k < carried_count; ++k)
    if (outputs[k] >= 0) e.add_node("Identity", cat(name, "/output_", k), {carried[k]}, {outputs[k]});
  for (size_t k = 0; k < scan_count; ++k)
    if (outputs[carried_count + k] >= 0)
      stack(e, scans[k], 0, outputs[carried_count + k], cat(name, "/scan_output_", k));
  e.commit();
  return "";
}

std::string unroll_scan(Expansion& e) {
  Graph& g = e.graph();
  const Node& node = e.node();
  if (g.opset < 9)
    return cat("Scan of opset ", g.opset, " (sequence lengths, a batch axis) is not supported; "
               "export with opset 9 or later");
  const Graph& body = subgraph(node, "body");
  const int64_t scan_inputs = attr_int(node, "num_scan_inputs", 0);
  if (scan_inputs < 1 || static_cast<size_t>(scan_inputs) > node.inputs.size() ||
      body.inputs.size() != node.inputs.size() || body.outputs.size() != node.outputs.size() ||
      body.outputs.size() + static_cast<size_t>(scan_inputs) < body.inputs.size())
    fail("node ", node_label(node), ": Scan has ", node.inputs.size(), " inputs (",
         scan_inputs, " scanned) and ", node.outputs.size(), " outputs, its body ",
         body.inputs.size(), " inputs and ", body.outputs.size(), " outputs");
  const size_t m = static_cast<size_t>(scan_inputs);
  const size_t n = node.inputs.size() - m;    // state values
  const size_t k_out = node.outputs.size() - n;  // scan outputs
  const auto in_axes = attr_ints(node, "scan_input_axes", std::vector<int64_t>(m, 0));
  const auto in_dirs = attr_ints(node, "scan_input_directions", std::vector<int64_t>(m, 0));
  const auto out_axes = attr_ints(node, "scan_output_axes", std::vector<int64_t>(k_out, 0));
  const auto out_dirs = attr_ints(node, "scan_output_directions", std::vector<int64_t>(k_out, 0));
  if (in_axes.size() != m || in_dirs.size() != m || out_axes.size() != k_out ||
      out_dirs.size() != k_out)
    fail("node ", node_label(node), ": its scan axes and directions do not give one per scan "
         "input (", m, ") and scan output (", k_out, ")");
  int64_t length = -1;
  std::vector<int64_t> axes(m);
  for (size_t j = 0; j < m; ++j) {
    const Value& x = g.values[node.inputs[n + j]];
    if (!x.shape_known)
      return cat("the length of its scan input '", x.name, "' is not known at conversion");
    const auto rank = static_cast<int64_t>(x.shape.size());
    axes[j] = in_axes[j] < 0 ? in_axes[j] + rank : in_axes[j];
    if (axes[j] < 0 || axes[j] >= rank)
      fail("node ", node_label(node), ": scan input axis ", in_axes[j], " is out of range for '",
           x.name, "' ", shape_str(x.shape));
    if (length >= 0 && x.shape[axes[j]] != length)
      fail("node ", node_label(node), ": its scan inputs have different lengths (", length,
           " and ", x.shape[axes[j]], " of '", x.name, "')");
    length = x.shape[axes[j]];
  }
  if (length > kMaxUnrolledIterations)
    return cat("its sequences are ", length, " long, more than the ", kMaxUnrolledIterations,
               " iterations jetplan unrolls");
  if (length == 0 && k_out > 0)
    return "its sequences are empty, and jetplan cannot make its scan outputs empty";
  const std::string name = node.name;
  const std::vector<int> inputs = node.inputs, outputs = node.outputs;
  std::vector<int> state(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<std::vector<int>> scans(k_out);
  for (int64_t t = 0; t < length; ++t) {
    const std::string prefix = cat(name, "/", t, "/");
    std::vector<int> in = state;
    for (size_t j = 0; j < m; ++j) {
      const int x = inputs[n + j];
      const int index = e.add_int64_scalar(cat(prefix, "index_", j), in_dirs[j] ? length - 1 - t : t);
      const int element = e.add_value(cat(prefix, g.values[x].name), g.values[x].dtype);
      e.add_node("Gather", cat(prefix, "element_", j), {x, index}, {element}).attrs["axis"] =
          int_attr(axes[j]);
      in.push_back(element);
    }
    const std::vector<int> out = e.inline_graph(body, in, prefix);
    state.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
    for (size_t k = 0; k < k_out; ++k) scans[k].push_back(out[n + k]);
  }
  for (size_t k = 0; k < n; ++k)
    if (outputs[k] >= 0) e.add_node("Identity", cat(name, "/output_", k), {state[k]}, {outputs[k]});
  for (size_t k = 0; k < k_out; ++k) {
    if (outputs[n + k] < 0) continue;
    std::vector<int> parts = scans[k];
    if (out_dirs[k]) std::reverse(parts.begin(), parts.end());
    int64_t axis = out_axes[k];
    if (axis < 0) {  // counted from the end of the stacked output: the element's rank + 1
      const Value& part = g.values[parts[0]];
      if (!part.shape_known)
        return cat("scan output ", k, " has a negative axis and elements of unknown rank");
      axis += static_cast<int64_t>(part.shape.size()) + 1;
    }
    stack(e, parts, axis, outputs[n + k], cat(name, "/scan_output_", k));
  }
  e.commit();
  return "";
}

}  // namespace jetplan::converter::fold
