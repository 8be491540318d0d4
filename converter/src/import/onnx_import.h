// ONNX -> IR. The only files that see protobuf and libonnx are in import/: this one's .cc (the
// checks and the pipeline), onnx_to_ir.cc (protobuf -> IR), onnx_proto.cc (node labels, external
// data) and onnx_schemas.cc (libonnx's schemas, shape inference guards and version converter).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

struct ImportOptions {
  // Graph input name -> concrete dims (--shape); pins symbolic dims, must agree with fixed ones.
  std::map<std::string, Shape> input_shapes;
  // The directory of the model file, where external data locations resolve. Empty: the model
  // came as bytes alone, and a model with external data is refused.
  std::string model_dir;
  // Graph input name -> its value (--freeze NAME=VALUE: a literal or a .npy path): the input
  // becomes a constant before shapes are checked or anything folds (freeze.h).
  std::map<std::string, std::string> freeze;
};

// Parses a serialized ModelProto, loads external data (files inside model_dir only, every
// offset and length checked against the file), freezes the inputs options.freeze names
// (OptionError for a name or value the model refuses), checks its structure (every value defined once,
// no cycle), sorts the nodes topologically (stable: a sorted model keeps its order), upgrades
// opsets 1-6 to 13 with libonnx's version converter, runs the libonnx checker and strict shape
// inference, and builds the IR. Opsets 7-17 are read as they are, later ones up to
// kNewestOnnxOpset through libonnx's opset-17 schemas where the ops mean the same and through
// the converter's own definitions (onnx_definitions.h) where ONNX added or redefined them.
//
// ConvertError for anything that is not a well-formed ONNX model: bytes that do not parse, an
// opset outside 1-28, a node that does not match its newer definition (check_newer_definitions), an external file that is missing, outside model_dir or too short, a
// missing initializer, a cycle, a symbolic input dim left unpinned, an old model the version
// converter cannot upgrade (naming the nodes), a checker or inference failure. Nodes whose op
// libonnx does not know are kept: check_support reports them together with every other
// unsupported node. Value shapes are filled where shape inference found them concrete;
// check_support computes the rest.
Graph import_onnx(const std::string& bytes, const ImportOptions& options);

// Every op type of the default ONNX domain up to kNewestOnnxOpset (libonnx's and those of
// onnx_definitions.h), sorted, with the opset that last changed it (element types aside, past
// opset 17) and whether ONNX deprecates it.
struct OnnxOpInfo {
  std::string op_type;
  int since_version = 0;
  bool deprecated = false;
};
std::vector<OnnxOpInfo> onnx_default_domain_ops();

}  // namespace jetplan::converter
