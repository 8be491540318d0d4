// The ONNX op definitions newer than libonnx 1.12's schemas, which end at opset 17: for each op of
// the default domain that a later opset added or redefined (its attributes, inputs, outputs or
// meaning changed; definitions that only add element types are left out), the attributes and input
// and output counts of that definition. The import checks the nodes of these ops against it where
// libonnx's checker cannot (check_newer_definitions), and the op checks read such a node by the
// definition its model's opset means (check_support refuses one whose definition the op's check
// does not read).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// The newest opset libonnx 1.12 has schemas for.
constexpr int kLibOnnxOpset = 17;
// The newest opset of the newest ONNX release (onnx 1.23): the newest jetplan-convert reads.
constexpr int kNewestOnnxOpset = 28;

struct OnnxDefinition {
  const char* op_type;
  int since_version;
  bool added;  // this definition adds the op to ONNX (there is none before it)
  // "name:type" of each attribute (type as AttributeProto spells it, lower case), sorted, separated
  // by spaces.
  const char* attributes;
  int min_inputs, max_inputs, min_outputs, max_outputs;
};

// The definition of `op_type` a model of default-domain `opset` means, where that is one of the
// definitions newer than kLibOnnxOpset; nullptr where it is libonnx's (or ONNX has no such op at
// `opset`). Static storage.
const OnnxDefinition* newer_definition(const std::string& op_type, int opset);

// The opset that adds `op_type` to ONNX where that is newer than kLibOnnxOpset; 0 otherwise.
int first_newer_opset(const std::string& op_type);

// Every op of the table (added or redefined after kLibOnnxOpset) with the newest opset that
// redefines it, sorted by op.
std::vector<std::pair<std::string, int>> newer_ops();

// Checks every default-domain node of `g` (Graph::opset is the model's) whose definition is a newer
// one against it, as libonnx's checker does with its schemas: attribute names and types, input and
// output counts. ConvertError naming every node that does not match.
void check_newer_definitions(const Graph& g);

}  // namespace jetplan::converter
