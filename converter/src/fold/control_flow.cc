// fold_control_flow (control_flow.h): the walk, If, and the expansion that inlines a subgraph;
// Loop and Scan unroll in unroll.cc.
#include "converter/src/fold/control_flow.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>

#include "converter/src/fold/subgraph.h"
#include "converter/src/ir/error.h"
#include "converter/src/ops/check.h"
#include "converter/src/passes/passes.h"

namespace jetplan::converter {
namespace fold {
namespace {

// The names `sub` and the subgraphs inside it read from graphs enclosing `sub`.
void outer_names(const Graph& sub, std::set<std::string>* out) {
  std::set<std::string> local;
  for (const Value& v : sub.values) (is_outer_reference(v) ? *out : local).insert(v.name);
  for (const Node& n : sub.nodes)
    for (const auto& [name, a] : n.attrs) {
      if (a.kind != Attribute::Kind::kGraph || !a.graph) continue;
      std::set<std::string> inner;
      outer_names(*a.graph, &inner);
      for (const std::string& s : inner)
        if (!local.count(s)) out->insert(s);
    }
}

// If: its chosen branch, when the condition is a constant.
std::string expand_if(Expansion& e) {
  const Node& node = e.node();
  Graph& g = e.graph();
  if (node.inputs.empty() || node.inputs[0] < 0)
    fail("node ", node_label(node), ": If has no condition input");
  const int cond = node.inputs[0];
  if (!g.values[cond].is_constant) return run_time_reason(g, "condition", cond);
  const std::vector<int64_t> c = read_ints(g.values[cond]);
  if (c.size() != 1)
    fail("node ", node_label(node), ": its condition '", g.values[cond].name, "' holds ", c.size(),
         " elements (If takes one)");
  const bool then = c[0] != 0;
  const Graph& branch = subgraph(node, then ? "then_branch" : "else_branch");
  if (!branch.inputs.empty() || branch.outputs.size() != node.outputs.size())
    fail("node ", node_label(node), ": its ", then ? "then" : "else", " branch takes ",
         branch.inputs.size(), " inputs and returns ", branch.outputs.size(),
         " values (If's branches take none and return one per output, ", node.outputs.size(), ")");
  const std::string name = node.name;
  const std::vector<int> outputs = node.outputs;
  const std::vector<int> got = e.inline_graph(branch, {}, name + (then ? "/then/" : "/else/"));
  for (size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k] >= 0) e.add_node("Identity", cat(name, "/output_", k), {got[k]}, {outputs[k]});
  e.commit();
  return "";
}

}  // namespace

const Graph& subgraph(const Node& node, const char* name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end() || it->second.kind != Attribute::Kind::kGraph || !it->second.graph)
    fail("node ", node_label(node), ": its '", name, "' subgraph is missing");
  return *it->second.graph;
}

std::string Expansion::unique_name(const std::string& base) {
  if (!names_.values.count(base)) return base;
  for (int k = 1;; ++k)
    if (!names_.values.count(cat(base, "_", k))) return cat(base, "_", k);
}

int Expansion::add_value(const std::string& name, DataType dtype) {
  Value v;
  v.name = unique_name(name);
  v.dtype = dtype;
  const std::string key = v.name;
  const int id = g_.add_value(std::move(v));
  names_.values[key] = id;
  return id;
}

int Expansion::add_constant(const std::string& name, DataType dtype, const Shape& shape,
                            std::vector<uint8_t> bytes) {
  const int id = add_value(name, dtype);
  Value& v = g_.values[id];
  v.shape = shape;
  v.shape_known = true;
  v.is_constant = true;
  v.data = std::move(bytes);
  return id;
}

int Expansion::add_int64_scalar(const std::string& name, int64_t v) {
  return add_constant(name, DataType::kInt64, {}, write_ints(DataType::kInt64, {v}));
}

Node& Expansion::add_node(const std::string& op_type, const std::string& name,
                          std::vector<int> inputs, std::vector<int> outputs) {
  Node n;
  n.name = name;
  for (int k = 1; names_.nodes.count(n.name); ++k) n.name = cat(name, "_", k);
  names_.nodes.insert(n.name);
  added_nodes_.push_back(n.name);
  n.op_type = op_type;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  nodes_.push_back(std::move(n));
  return nodes_.back();
}

std::vector<int> Expansion::inline_graph(const Graph& sub, const std::vector<int>& inputs,
                                         const std::string& prefix) {
  if (inputs.size() != sub.inputs.size())
    fail("internal error: a subgraph of ", node_label(node()), " takes ", sub.inputs.size(),
         " inputs, bound to ", inputs.size());
  std::vector<int> id(sub.values.size(), -1);
  std::map<std::string, std::string> rename;  // the subgraph's names -> the graph's
  for (size_t k = 0; k < inputs.size(); ++k) id[sub.inputs[k]] = inputs[k];
  for (size_t v = 0; v < sub.values.size(); ++v) {
    const Value& s = sub.values[v];
    if (id[v] < 0 && s.is_constant) {
      id[v] = add_constant(prefix + s.name, s.dtype, s.shape, s.data);
    } else if (id[v] < 0 && s.producer >= 0) {
      id[v] = add_value(prefix + s.name, s.dtype);
      g_.values[id[v]].shape = s.shape;
      g_.values[id[v]].shape_known = s.shape_known;
    } else if (id[v] < 0) {
      auto it = names_.values.find(s.name);
      if (it == names_.values.end())
        fail("node ", node_label(node()), ": a subgraph reads '", s.name,
             "', which no enclosing graph defines");
      id[v] = it->second;
      continue;  // an enclosing value keeps its name
    }
    rename[s.name] = g_.values[id[v]].name;
  }
  for (const Node& s : sub.nodes) {
    auto map = [&](const std::vector<int>& ids) {
      std::vector<int> out;
      for (int v : ids) out.push_back(v < 0 ? -1 : id[v]);
      return out;
    };
    Node& n = add_node(s.op_type, prefix + s.name, map(s.inputs), map(s.outputs));
    n.domain = s.domain;
    n.attrs = s.attrs;
    for (auto& [name, a] : n.attrs)
      if (a.kind == Attribute::Kind::kGraph && a.graph) a.graph = renamed_references(*a.graph, rename);
  }
  std::vector<int> outputs;
  for (int v : sub.outputs) outputs.push_back(id[v]);
  return outputs;
}

void Expansion::fold_added() {
  for (Node& n : nodes_)
    if (!n.dead && !is_control_flow(n) && definition_reason(g_, n).empty()) fold_node(g_, n);
}

std::vector<Node> Expansion::take() {
  if (!committed_) fail("internal error: the expansion of ", node_label(node_), " is incomplete");
  std::vector<Node> live;
  for (Node& n : nodes_)
    if (!n.dead) live.push_back(std::move(n));
  nodes_.clear();
  return live;
}

void Expansion::rollback() {
  for (size_t v = values_before_; v < g_.values.size(); ++v) names_.values.erase(g_.values[v].name);
  g_.values.resize(values_before_);
  for (const std::string& n : added_nodes_) names_.nodes.erase(n);
  added_nodes_.clear();
  nodes_.clear();
}

bool unused(const Graph& g, const Node& node, const std::vector<Node>& readers) {
  std::set<std::string> names;
  for (int v : node.outputs) {
    if (v < 0) continue;
    if (g.values[v].graph_output) return false;
    names.insert(g.values[v].name);
  }
  for (const Node& n : readers) {
    if (n.dead) continue;
    for (int v : n.inputs)
      if (v >= 0 && names.count(g.values[v].name)) return false;
    std::set<std::string> reads;
    for (const auto& [name, a] : n.attrs)
      if (a.kind == Attribute::Kind::kGraph && a.graph) outer_names(*a.graph, &reads);
    for (const std::string& r : reads)
      if (names.count(r)) return false;
  }
  return true;
}

std::vector<std::string> input_dependencies(const Graph& g, int value) {
  std::map<std::string, int> by_name;
  for (size_t v = 0; v < g.values.size(); ++v) by_name[g.values[v].name] = static_cast<int>(v);
  std::vector<bool> seen(g.values.size(), false);
  std::vector<int> todo = {value};
  while (!todo.empty()) {
    const int v = todo.back();
    todo.pop_back();
    if (v < 0 || seen[v]) continue;
    seen[v] = true;
    if (g.values[v].producer < 0) continue;
    const Node& n = g.nodes[g.values[v].producer];
    todo.insert(todo.end(), n.inputs.begin(), n.inputs.end());
    std::set<std::string> reads;
    for (const auto& [name, a] : n.attrs)
      if (a.kind == Attribute::Kind::kGraph && a.graph) outer_names(*a.graph, &reads);
    for (const std::string& r : reads)
      if (by_name.count(r)) todo.push_back(by_name[r]);
  }
  std::vector<std::string> names;
  for (int in : g.inputs)
    if (seen[in]) names.push_back(g.values[in].name);
  return names;
}

std::string run_time_reason(const Graph& g, const char* what, int value) {
  const std::vector<std::string> inputs = input_dependencies(g, value);
  const std::string head = cat("its ", what, " '", g.values[value].name, "' is computed at run time");
  if (inputs.empty()) {
    // No graph input reaches it: some node on the way did not fold though its inputs are
    // constant. Name that node, the first one up the chain whose inputs are all constant.
    int p = g.values[value].producer;
    for (int hops = 0; p >= 0 && hops < int(g.nodes.size()); ++hops) {
      int next = -1;
      for (int in : g.nodes[p].inputs)
        if (in >= 0 && !g.values[in].is_constant && g.values[in].producer >= 0) next = g.values[in].producer;
      if (next < 0) break;
      p = next;
    }
    return p < 0 ? head
                 : cat(head, " by node ", node_label(g.nodes[p]), ", which jetplan does not fold");
  }
  std::string names, flags;
  for (const std::string& in : inputs) {
    names += cat(names.empty() ? "" : ", ", "'", in, "'");
    flags += cat(flags.empty() ? "" : " ", "--freeze ", in, "=VALUE");
  }
  return cat(head, " from graph input", inputs.size() == 1 ? " " : "s ", names, "; pin ",
             inputs.size() == 1 ? "it" : "them", " with ", flags);
}

}  // namespace fold

bool is_control_flow(const Node& node) {
  return node.domain.empty() &&
         (node.op_type == "If" || node.op_type == "Loop" || node.op_type == "Scan");
}

const char* control_flow_notes(const std::string& op_type) {
  if (op_type == "If")
    return "folds to the branch its condition chooses when the condition is a constant "
           "(--freeze pins a graph input to one)";
  if (op_type == "Loop")
    return "unrolled when its trip count is a constant of at most 64 (or its condition folds "
           "to false within 64 iterations) and its body's condition folds every iteration";
  if (op_type == "Scan")
    return "opset 9 and later; unrolled over sequences of a length known at conversion, at "
           "most 64";
  return nullptr;
}

// The walk keeps the nodes still to visit on a stack, the next one last, and appends each node
// it keeps to g.nodes: an expansion's nodes go onto the stack (visited next, in order), so the
// work per control-flow node is that of its own nodes, whatever the graph's size.
void fold_control_flow(Graph& g) {
  if (std::none_of(g.nodes.begin(), g.nodes.end(), is_control_flow)) return;
  fold::Names names;
  for (size_t v = 0; v < g.values.size(); ++v) {
    names.values[g.values[v].name] = static_cast<int>(v);
    g.values[v].producer = -1;  // set again as each node is kept
  }
  for (const Node& n : g.nodes) names.nodes.insert(n.name);
  std::vector<Node> todo(std::make_move_iterator(g.nodes.rbegin()),
                         std::make_move_iterator(g.nodes.rend()));
  g.nodes.clear();
  auto keep = [&g](Node node) {
    for (int v : node.outputs)
      if (v >= 0) g.values[v].producer = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(node));
  };
  std::vector<std::string> refused;
  while (!todo.empty()) {
    Node node = std::move(todo.back());
    todo.pop_back();
    if (node.dead) continue;
    if (!is_control_flow(node)) {
      if (!(node.domain.empty() && definition_reason(g, node).empty() && fold_node(g, node)))
        keep(std::move(node));
      continue;
    }
    fold::Expansion e(g, node, names);
    const std::string why = node.op_type == "If"     ? fold::expand_if(e)
                            : node.op_type == "Loop" ? fold::unroll_loop(e)
                                                     : fold::unroll_scan(e);
    if (why.empty()) {
      std::vector<Node> added = e.take();
      if (g.nodes.size() + todo.size() + added.size() > kMaxNodesAfterUnrolling)
        fail("node ", node_label(node), ": unrolling its control flow makes the graph more than ",
             kMaxNodesAfterUnrolling, " nodes, the most jetplan unrolls to (loops nested in loops)");
      todo.insert(todo.end(), std::make_move_iterator(added.rbegin()),
                  std::make_move_iterator(added.rend()));
      continue;
    }
    e.rollback();
    // Control flow whose outputs nothing reads is no reason to refuse the model.
    if (fold::unused(g, node, todo)) continue;
    refused.push_back(cat(node_label(node), ": ", why));
    keep(std::move(node));
  }
  g.compact();
  if (refused.empty()) return;
  std::string list;
  for (const std::string& r : refused) list += (list.empty() ? "" : "; ") + r;
  fail(refused.size() == 1 ? std::string("control flow that does not fold")
                           : cat(refused.size(), " control-flow nodes that do not fold"),
       " (jetplan runs If, Loop and Scan by folding them at conversion): ", list);
}

}  // namespace jetplan::converter
