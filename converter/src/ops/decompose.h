// What the decompositions share (ops whose ONNX definition is a graph of other ops, run as those
// ops: DecomposeFn, check.h): OnnxNodes builds the unresolved nodes that replace one node, and
// the decompositions themselves, each in the file of the family its row lives in.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"
#include "converter/src/ir/graph_edit.h"

namespace jetplan::converter::ops {

// Appends nodes to *out (not owned; it outlives the builder) and values to `g`, named after the
// replaced node ("<node>/<what>", made unique in the graph).
class OnnxNodes {
 public:
  OnnxNodes(Graph& g, const Node& node, std::vector<Node>* out);

  // Node `op_type` reading `inputs`, its one output a new value named after `what` (or the
  // existing value `to`); returns the output.
  int add(const std::string& op_type, const std::string& what, std::vector<int> inputs,
          std::map<std::string, Attribute> attrs = {}, int to = -1);
  // Constants: any, int64 [n], a float32 scalar ([]) and a float32 tensor.
  int constant(const std::string& what, DataType dtype, const Shape& shape,
               std::vector<uint8_t> bytes);
  int ints(const std::string& what, const std::vector<int64_t>& v);
  int scalar(const std::string& what, float v);
  int floats(const std::string& what, const Shape& shape, const std::vector<float>& v);

  static Attribute int_attr(int64_t v);
  static Attribute ints_attr(std::vector<int64_t> v);

 private:
  std::string unique(const std::string& what);

  Graph& g_;
  std::string prefix_;
  std::vector<Node>& out_;
  GraphNames names_;  // every value and node name of the graph
};

// Attention (opset 23 to 25; attention.cc) and RotaryEmbedding (opset 23; binary.cc).
std::string decompose_attention(Graph& g, const Node& node, std::vector<Node>* out);
std::string decompose_rotary_embedding(Graph& g, const Node& node, std::vector<Node>* out);
// DFT (opsets 17 and 20) and STFT (opset 17; spectral.cc).
std::string decompose_dft(Graph& g, const Node& node, std::vector<Node>* out);
std::string decompose_stft(Graph& g, const Node& node, std::vector<Node>* out);

}  // namespace jetplan::converter::ops
