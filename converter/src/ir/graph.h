// The converter's intermediate representation: a dataflow graph of values and nodes, imported
// from ONNX, rewritten by the passes and lowered to plan steps. It owns all its data (constants
// included) and knows nothing of protobuf.
//
// Lifecycle of a node: import fills name/op_type/inputs/outputs/attrs; check_support either folds
// it into constants (dead) or resolves it to one plan op (`op`, output shapes known, inputs cut
// to the step's); the fusion passes merge resolved nodes; legalize gives each node its step's
// exact shapes; lower() turns each live node into one plan step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "converter/src/ir/op_desc.h"
#include "jetplan/plan_generated.h"

namespace jetplan::converter {

// Element types, numbered as ONNX TensorProto.DataType so that import is a cast.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// Bytes per element; 0 for types without a fixed size (string, undefined, unknown numbers).
size_t dtype_size(DataType type);
const char* dtype_name(DataType type);

using Shape = std::vector<int64_t>;

int64_t shape_count(const Shape& shape);  // shapes that passed checked_bytes() only

// No tensor of a plan may be this large; keeps every size computation far from overflow.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;
// product(shape) * element_size when every dim is >= 0 and the result is at most
// kMaxTensorBytes; -1 otherwise. Safe on any input (dims from an untrusted file).
int64_t checked_bytes(const Shape& shape, size_t element_size);
std::string shape_str(const Shape& shape);  // "[1,3,224,224]"
// True when a Transpose of `in` by `perm` keeps the order of the dims longer than 1: it leaves
// every byte where it was (a reshape). False for a malformed perm.
bool moves_only_unit_dims(const Shape& in, const std::vector<int32_t>& perm);

// Dense row-major data with little-endian elements.
struct TensorData {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  std::vector<uint8_t> bytes;
};

struct Graph;

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph, kOther };
  Kind kind = Kind::kOther;
  int64_t i = 0;
  float f = 0.f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;  // kStrings (RNN, LSTM, GRU activations)
  TensorData tensor;
  // kGraph: a subgraph (If's branches, Loop's and Scan's bodies; see Graph), shared by the
  // node's copies and never changed: inlining it (fold/control_flow.h) copies it.
  std::shared_ptr<const Graph> graph;
  std::string onnx_type;  // for kOther: the ONNX attribute type name, for messages
};

struct Value {
  std::string name;
  DataType dtype = DataType::kUndefined;
  Shape shape;
  bool shape_known = false;
  bool is_constant = false;
  std::vector<uint8_t> data;  // the elements when is_constant
  int producer = -1;          // node index, -1 for graph inputs and constants
  int graph_input = -1;       // index into Graph::inputs, -1 when not a graph input
  bool graph_output = false;
};

struct Node {
  std::string name;  // ONNX name, op_type + '_' + index when unnamed; fused nodes join with '+'
  std::string op_type;
  std::string domain;
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
  std::map<std::string, Attribute> attrs;
  OpDesc op;
  bool dead = false;
};

// The main graph, or a subgraph held by a node's attribute (Attribute::kGraph). A subgraph's
// `inputs` are its formal inputs (a Loop body's iteration number, condition and carried values),
// its `outputs` what it returns; a value of a subgraph that is no constant, no formal input and
// no node's output (producer -1) is a reference to a value of an enclosing graph, by name.
struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;   // topological order
  std::vector<int> inputs;   // runtime graph inputs (initializers excluded), ONNX order
  std::vector<int> outputs;  // graph outputs, ONNX order
  int opset = 0;             // of the default ONNX domain

  int add_value(Value value);
  // Per value id: the indices of live nodes that read it, ascending (a node reading a value
  // twice is listed twice).
  std::vector<std::vector<int>> consumers() const;
  // Drops dead nodes (keeping order) and recomputes Value::producer.
  void compact();
  // Replaces every read of value `from` (node inputs and graph outputs) by value `to`.
  void replace_uses(int from, int to);
};

// A subgraph's reference to a value of an enclosing graph (see Graph): no constant, no formal
// input, no node's output.
bool is_outer_reference(const Value& v);
// `sub` with its references to enclosing values renamed by `rename` (old name -> new name), at
// every depth; a name a graph defines itself hides the enclosing one below it.
std::shared_ptr<const Graph> renamed_references(const Graph& sub,
                                                std::map<std::string, std::string> rename);

// "'conv1' (Conv)", the way every message names a node.
std::string node_label(const Node& node);

// Attribute accessors: the default when absent; ConvertError naming the node when present with
// the wrong kind.
int64_t attr_int(const Node& node, const std::string& name, int64_t fallback);
float attr_float(const Node& node, const std::string& name, float fallback);
std::string attr_string(const Node& node, const std::string& name, const std::string& fallback);
std::vector<int64_t> attr_ints(const Node& node, const std::string& name,
                               const std::vector<int64_t>& fallback);
bool has_attr(const Node& node, const std::string& name);

// Reads the elements of a constant of any numeric type, converting each one; ConvertError for
// types that carry no numbers (string, complex, float16, bfloat16).
std::vector<double> read_doubles(const Value& value);
std::vector<int64_t> read_ints(const Value& value);
std::vector<double> read_doubles(const TensorData& data);
std::vector<int64_t> read_ints(const TensorData& data);
// Builds `dtype` elements from numbers (rounding/truncating as a C++ cast does).
std::vector<uint8_t> write_doubles(DataType dtype, const std::vector<double>& values);
std::vector<uint8_t> write_ints(DataType dtype, const std::vector<int64_t>& values);
bool is_numeric(DataType dtype);  // read_/write_ functions accept it
bool is_plan_dtype(DataType dtype);  // a plan tensor may have it (fb::DType)
// The plan's number for a plan dtype (is_plan_dtype); false for the others. The one mapping:
// the serializer writes it, and constant folding reads it as kernels::DType (numbered alike).
bool to_plan_dtype(DataType dtype, fb::DType* out);
// The plan dtypes, in words, for messages: "float32, float16, ... and bool".
const char* plan_dtype_list();
// int16, uint16, uint32, uint64 and bfloat16: plan dtypes that only some steps take, on both
// backends (data movement and Cast; the integers also integer arithmetic and comparisons: see
// ops/check.cc).
bool is_limited_dtype(DataType dtype);
bool is_floating(DataType dtype);

}  // namespace jetplan::converter
