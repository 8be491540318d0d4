// Small graph-editing helpers for passes that replace one node by several (legalize and the
// families' expansions, converter/src/ops/steps.h; values are appended to g.values, nodes are
// returned for the caller to place in topological order), and the reader checks the fusion
// passes share.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// The names a graph's values and nodes hold, and fresh ones: `base`, or `base_1`, `base_2`, ...
// where it is taken. Names it hands out count as taken.
class GraphNames {
 public:
  explicit GraphNames(const Graph& g) {
    for (const Value& v : g.values) taken_.insert(v.name);
    for (const Node& n : g.nodes) taken_.insert(n.name);
  }
  std::string unique(const std::string& base) {
    std::string name = base;
    for (int k = 1; taken_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

 private:
  std::set<std::string> taken_;
};

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

// With readers = g.consumers(): the node producing `value` when exactly one node reads it and
// it is no graph output (a fusion may then absorb the producer), else nullptr.
inline Node* private_producer(Graph& g, const std::vector<std::vector<int>>& readers, int value) {
  const Value& v = g.values[value];
  if (v.producer < 0 || v.graph_output || readers[value].size() != 1) return nullptr;
  return &g.nodes[v.producer];
}

// The one node reading `value` (which must be no graph output), or nullptr.
inline Node* only_reader(Graph& g, const std::vector<std::vector<int>>& readers, int value) {
  if (g.values[value].graph_output || readers[value].size() != 1) return nullptr;
  return &g.nodes[readers[value][0]];
}

}  // namespace jetplan::converter
