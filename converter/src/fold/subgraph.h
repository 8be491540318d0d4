// Internal to fold_control_flow (control_flow.cc, unroll.cc): building the nodes that replace one
// control-flow node, and saying why one does not fold.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::fold {

// Every value's and node's name in the graph while fold_control_flow runs, kept up to date as
// expansions add theirs (and forget them when they roll back): looked up, never rebuilt.
struct Names {
  std::map<std::string, int> values;
  std::set<std::string> nodes;
};

// The nodes replacing one control-flow node. Values are added to g.values at once (rollback()
// takes them away again); nodes collect here, and take() hands them over after commit().
class Expansion {
 public:
  Expansion(Graph& g, const Node& node, Names& names)
      : g_(g), node_(node), names_(names), values_before_(g.values.size()) {}

  Graph& graph() { return g_; }
  const Node& node() const { return node_; }

  // Adds the nodes of `sub` with its formal input k bound to value `inputs[k]`; its constants and
  // node outputs become new values named `prefix` + their name (made unique), its references to
  // enclosing values resolve by name (ConvertError naming the control-flow node when a name is
  // not there). Returns the values of its outputs, in order.
  std::vector<int> inline_graph(const Graph& sub, const std::vector<int>& inputs,
                                const std::string& prefix);
  // A new value named `name` (made unique), of `dtype`, not yet produced by anything.
  int add_value(const std::string& name, DataType dtype);
  // A new constant value.
  int add_constant(const std::string& name, DataType dtype, const Shape& shape,
                   std::vector<uint8_t> bytes);
  int add_int64_scalar(const std::string& name, int64_t v);
  // A new node (named `name` made unique); the reference lives until the next add_node.
  Node& add_node(const std::string& op_type, const std::string& name, std::vector<int> inputs,
                 std::vector<int> outputs);
  // Folds the nodes added so far that fold now (a Loop body's condition is needed at once).
  void fold_added();
  // The expansion is complete: take() gives its nodes.
  void commit() { committed_ = true; }
  // The nodes that replace the control-flow node, in order, folded ones left out.
  std::vector<Node> take();
  // Forgets the values, names and nodes added: the graph is as before.
  void rollback();

 private:
  std::string unique_name(const std::string& base);

  Graph& g_;
  const Node& node_;
  Names& names_;
  size_t values_before_;
  std::vector<std::string> added_nodes_;  // their names, for rollback
  std::vector<Node> nodes_;
  bool committed_ = false;
};

// The subgraph attribute `name` of a control-flow node; ConvertError naming the node without it.
const Graph& subgraph(const Node& node, const char* name);

// True when none of `node`'s outputs is a graph output or read by a node of `readers` (their
// subgraphs included).
bool unused(const Graph& g, const Node& node, const std::vector<Node>& readers);

// The names of the graph inputs that `value` is computed from (through node inputs and the
// values subgraphs read by name), in the graph's input order.
std::vector<std::string> input_dependencies(const Graph& g, int value);

// "its <what> 'name' is computed at run time from graph input 'sr'; freeze it with --freeze
// sr=VALUE" (or, without graph inputs, by which node that does not fold).
std::string run_time_reason(const Graph& g, const char* what, int value);

// Loop and Scan (unroll.cc): "" after replacing the node, else why they do not unroll (the
// graph as before).
std::string unroll_loop(Expansion& e);
std::string unroll_scan(Expansion& e);

}  // namespace jetplan::converter::fold
