// Small graph-editing helpers for passes that replace one node by several (legalize and the
// families' expansions, converter/src/ops/steps.h). Values are appended to g.values; nodes are
// returned, for the caller to place in topological order.
#pragma once

#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

inline int new_value(Graph& g, const std::string& name, DataType dtype, const Shape& shape) {
  Value v;
  v.name = name;
  v.dtype = dtype;
  v.shape = shape;
  v.shape_known = true;
  return g.add_value(std::move(v));
}

inline int new_constant(Graph& g, const std::string& name, DataType dtype, const Shape& shape,
                        std::vector<uint8_t> data) {
  const int id = new_value(g, name, dtype, shape);
  g.values[id].is_constant = true;
  g.values[id].data = std::move(data);
  return id;
}

// A resolved Copy node (a view: equal byte sizes, any shapes).
inline Node copy_node(const std::string& name, int from, int to) {
  Node n;
  n.name = name;
  n.op_type = "Copy";
  n.inputs = {from};
  n.outputs = {to};
  n.op.resolved = true;
  n.op.family = fb::OpFamily::Copy;
  return n;
}

}  // namespace jetplan::converter
