// The IR of a checked ONNX model (onnx_import.cc runs the checks, upgrades and shape inference
// first): values for initializers, graph inputs and node outputs with the types and shapes the
// model gives, nodes with their attributes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// "" for the default domain (spelled "" or "ai.onnx"), else the domain.
std::string normalized_domain(const std::string& domain);

// The graph of `model`, whose nodes are topologically sorted; original_index[i] is node i's
// index in the file (which names unnamed nodes). ConvertError for a tensor or attribute that
// cannot be read.
Graph build_graph(const onnx::ModelProto& model, const std::vector<int>& original_index,
                  int opset);

}  // namespace jetplan::converter
