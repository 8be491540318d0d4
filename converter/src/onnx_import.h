// ONNX -> IR. The only file that sees protobuf and libonnx.
#pragma once

#include <map>
#include <string>

#include "converter/src/graph.h"

namespace jetplan::converter {

struct ImportOptions {
  // Graph input name -> concrete dims (--shape); pins symbolic dims, must agree with fixed ones.
  std::map<std::string, Shape> input_shapes;
};

// Parses a serialized ModelProto, checks its structure (every value defined once, no cycle),
// sorts the nodes topologically (stable: a sorted model keeps its order), runs the libonnx
// checker and strict shape inference, and builds the IR.
//
// ConvertError for anything that is not a well-formed ONNX model: bytes that do not parse, a
// missing initializer, a cycle, a symbolic input dim left unpinned, a checker or inference
// failure. Nodes whose op libonnx does not know are kept: check_support reports them together
// with every other unsupported node. Value shapes are filled where shape inference found them
// concrete; check_support computes the rest.
Graph import_onnx(const std::string& bytes, const ImportOptions& options);

}  // namespace jetplan::converter
