// What the families' expansions (registry.h, ExpandFn) share: StepWriter appends the steps that
// replace a multi-step node, converting constants at once where it can; expand_promoted runs a
// node in its compute dtype between Cast steps (Expansion::kPromote, families Activation, Pool,
// Binary, Unary, Elementwise).
#pragma once

#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

// Appends to `out` (not owned; it outlives the writer) and adds values to `g`. New values are
// named after their step, which keeps tensor names unique.
class StepWriter {
 public:
  StepWriter(Graph& g, std::vector<Node>* out) : g_(g), out_(*out) {}

  Graph& graph() { return g_; }
  const Value& value(int id) const { return g_.values[id]; }
  // Appends a node.
  void add(Node node) { out_.push_back(std::move(node)); }
  // A resolved node of one step (not appended).
  static Node step(const std::string& name, fb::OpFamily family, std::vector<int> inputs,
                   int output);
  // Value `v` as `to`: a constant is converted now, a run-time tensor by a Cast step.
  int cast(int v, DataType to, const std::string& step_name);
  // Value `v` with another shape of the same size.
  int view(int v, const Shape& shape, const std::string& step_name);
  // Writes `v` into the existing value `y` (same size, maybe another shape) with a Copy.
  void view_into(int v, int y, const std::string& step_name);
  // `v` transposed by perm into value `to` (-1: a new value); constants are transposed now.
  int transpose(int v, const std::vector<int32_t>& perm, const std::string& step_name, int to = -1);
  // One two-input arithmetic step a op b -> out (-1: a new value), in the dtype of a and b.
  int arith(const std::string& op, int a, int b, int out, const std::string& name);

 private:
  Graph& g_;
  std::vector<Node>& out_;
};

// Value `v` seen with another shape of the same size: a re-described constant, or a Copy step
// appended to *out; the new value is named after `v` and the shape (StepWriter::view names it
// after the step).
int view_of(Graph& g, int v, const Shape& shape, const std::string& step_name,
            std::vector<Node>* out);

// Appends `node` writing `step_out` (a new value: its output 0 in the step's shape) and then a
// Copy step named `copy_name` from it into the node's former output 0 (ONNX's shape). Returns
// true (an expansion's result).
bool append_with_output_view(Node& node, int step_out, const std::string& copy_name,
                             std::vector<Node>* out);

// Expansion::kPromote: the node's inputs cast to its compute dtype, its output cast back.
bool expand_promoted(Graph& g, Node& node, std::vector<Node>* out);

}  // namespace jetplan::converter::ops
