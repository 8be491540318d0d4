// Control flow that folds: jetplan's plans are straight lists of steps, so the ONNX control-flow
// ops run only by disappearing at conversion.
//   If    whose condition is a constant (an initializer, a Constant, a --freeze'd input, shape
//         arithmetic the folder evaluates) becomes the nodes of the branch it chooses;
//   Loop  with a constant trip count of at most kMaxUnrolledIterations, whose condition input is
//         absent or constant and whose body's condition folds to a constant every iteration
//         (a run-time early exit cannot unroll), becomes its body repeated;
//   Scan  (opset 9 and later) over sequences of a length known at conversion, at most
//         kMaxUnrolledIterations, becomes its body repeated on Gathers of each element.
// The nodes they add are walked in turn, so control flow nested in a branch or body folds too.
#pragma once

#include <cstdint>
#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

constexpr int64_t kMaxUnrolledIterations = 64;
// Nested loops multiply: the graph may grow to this many nodes by unrolling, no further (a model
// is untrusted input, and a plan of more steps would not be one worth running).
constexpr size_t kMaxNodesAfterUnrolling = 500000;

// If, Loop or Scan of the default domain.
bool is_control_flow(const Node& node);
// What jetplan does with control-flow op `op_type`, one line for --list-ops; nullptr for the
// other ops.
const char* control_flow_notes(const std::string& op_type);

// Walks the nodes in order, folding constants (fold_node, for the nodes whose definition jetplan
// reads) and replacing every control-flow node that folds by its nodes: a branch's or body's
// values get fresh names (the control-flow node's name, the iteration, their own), references
// to enclosing values resolve by name, and each output of the control-flow node keeps its value
// (an Identity from what the branch or body computed). A graph without control flow is left as
// it is. Throws ONE ConvertError naming every control-flow node that does not fold and why:
// the graph inputs its condition or trip count is computed from, with the --freeze that would
// pin them, or its limit (iterations, a run-time early exit, an unknown sequence length).
void fold_control_flow(Graph& g);

}  // namespace jetplan::converter
