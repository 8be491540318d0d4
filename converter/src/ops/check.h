// What jetplan can run: the walk that applies each ONNX op's check function (the op rows of
// the families, converter/src/ops/<family>.cc, reached through registry.h) to a graph.
#pragma once

#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// Walks the nodes in order. Each node is either folded into constants (fold_node) or checked
// against the op table: a supported node gets its plan op (node.op) and its output shapes, an
// unsupported one adds "'name' (Op): reason" to a list. Graph inputs and outputs that are not
// float32 are listed too. If the list is not empty, throws ONE ConvertError naming every item,
// e.g. "2 unsupported nodes: 'n1' (Foo): no such op in jetplan; 'n2' (Conv): ...".
// ConvertError also for an inconsistent model found on the way (a shape mismatch), naming the
// node. A node downstream of an unsupported one is checked when its input shapes are known
// (from ONNX shape inference) and skipped otherwise.
void check_support(Graph& g);

// The check function of one op: returns "" when the node is supported, after filling node.op
// and its output shapes, or the reason it is not (one phrase, no node name).
using CheckFn = std::string (*)(Graph& g, Node& node);

// nullptr when jetplan has no step for the op (default domain), or decomposes it (DecomposeFn).
CheckFn find_check(const std::string& op_type);

// An op jetplan runs as a small graph of other ONNX ops (Attention, RotaryEmbedding: their
// definitions are such graphs): returns "" after appending to *out the unresolved nodes that
// replace `node` (in topological order, reading its inputs and writing its outputs; constants
// and intermediate values added to `g`), or the reason it is not supported, appending nothing.
// Input shapes are known. check_support puts the nodes where `node` was and checks them next,
// so each is folded or resolved by its own op's rules, and the fusion passes see them.
using DecomposeFn = std::string (*)(Graph& g, const Node& node, std::vector<Node>* out);

// The definition newer than opset 17 (import/onnx_definitions.h) of `op_type` that a model of
// default-domain `opset` means and that jetplan does not read (newer than its op row's
// reads_opset; any such definition of an op that only folds); 0 when jetplan reads the op's
// definition at `opset`, or has no step for the op and cannot fold it. Its since_version.
int unread_definition(const std::string& op_type, int opset);

// Why default-domain `node` is not read at the model's opset (Graph::opset): an op ONNX adds
// after it, or a definition newer than the one the op's check reads (unread_definition); ""
// when it is read. Folding honours it as the check does: such a node never folds.
std::string definition_reason(const Graph& g, const Node& node);

}  // namespace jetplan::converter
