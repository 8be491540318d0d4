// Protobuf -> IR (see onnx_to_ir.h).
#include "converter/src/import/onnx_to_ir.h"

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/import/onnx_proto.h"
#include "converter/src/ir/error.h"

namespace jetplan::converter {

std::string normalized_domain(const std::string& domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

namespace {

TensorData tensor_from_proto(const onnx::TensorProto& t, const std::string& what) {
  TensorData out;
  out.dtype = static_cast<DataType>(t.data_type());
  for (int64_t d : t.dims()) {
    if (d < 0) fail(what, " has a negative dim ", d);
    out.shape.push_back(d);
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL)  // import loaded all it could reach
    fail(what, " keeps its data in an external file, which jetplan-convert does not read here");
  if (t.has_segment()) fail(what, " is a segment of a larger tensor, which is not supported");
  if (out.dtype == DataType::kString) return out;  // no numbers: nothing can compute on it
  const size_t size = dtype_size(out.dtype);
  if (size == 0) fail(what, " has an unknown data type ", t.data_type());
  if (checked_bytes(out.shape, size) < 0)
    fail(what, " of shape ", shape_str(out.shape), " is too large");
  const int64_t count = shape_count(out.shape);
  const uint64_t bytes = static_cast<uint64_t>(count) * size;
  if (!t.raw_data().empty() || count == 0) {
    if (t.raw_data().size() != bytes)
      fail(what, ": raw_data holds ", t.raw_data().size(), " bytes, but ", shape_str(out.shape),
           " ", dtype_name(out.dtype), " needs ", bytes);
    out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return out;
  }
  auto check_count = [&](int have, int64_t per_element) {
    if (have != count * per_element)
      fail(what, " holds ", have, " values, but ", shape_str(out.shape), " ", dtype_name(out.dtype),
           " needs ", count * per_element);
  };
  out.bytes.resize(bytes);
  uint8_t* dst = out.bytes.data();
  switch (out.dtype) {
    case DataType::kFloat32:
    case DataType::kComplex64:
      check_count(t.float_data_size(), out.dtype == DataType::kComplex64 ? 2 : 1);
      std::memcpy(dst, t.float_data().data(), bytes);
      break;
    case DataType::kFloat64:
    case DataType::kComplex128:
      check_count(t.double_data_size(), out.dtype == DataType::kComplex128 ? 2 : 1);
      std::memcpy(dst, t.double_data().data(), bytes);
      break;
    case DataType::kInt64:
      check_count(t.int64_data_size(), 1);
      std::memcpy(dst, t.int64_data().data(), bytes);
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      check_count(t.uint64_data_size(), 1);
      for (int64_t i = 0; i < count; ++i) {
        const uint64_t v = t.uint64_data(static_cast<int>(i));
        std::memcpy(dst + i * size, &v, size);  // little-endian: the low bytes come first
      }
      break;
    default:  // the narrow types travel in int32_data, one element per entry
      check_count(t.int32_data_size(), 1);
      for (int64_t i = 0; i < count; ++i) {
        const int32_t v = t.int32_data(static_cast<int>(i));
        std::memcpy(dst + i * size, &v, size);
      }
      break;
  }
  return out;
}

Graph subgraph_from_proto(const onnx::GraphProto& gp, int opset, const std::string& what);

Attribute attribute_from_proto(const onnx::AttributeProto& a, const std::string& what,
                               int opset) {
  Attribute out;
  const auto type = attribute_type(a);
  switch (type) {
    case onnx::AttributeProto::FLOAT:
      out.kind = Attribute::Kind::kFloat;
      out.f = a.f();
      break;
    case onnx::AttributeProto::INT:
      out.kind = Attribute::Kind::kInt;
      out.i = a.i();
      break;
    case onnx::AttributeProto::STRING:
      out.kind = Attribute::Kind::kString;
      out.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      out.kind = Attribute::Kind::kTensor;
      out.tensor = tensor_from_proto(a.t(), what + " attribute '" + a.name() + "'");
      break;
    case onnx::AttributeProto::GRAPH:
      out.kind = Attribute::Kind::kGraph;
      out.graph = std::make_shared<const Graph>(
          subgraph_from_proto(a.g(), opset, what + " attribute '" + a.name() + "'"));
      break;
    case onnx::AttributeProto::FLOATS:
      out.kind = Attribute::Kind::kFloats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      out.kind = Attribute::Kind::kInts;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      out.kind = Attribute::Kind::kStrings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    default:
      out.kind = Attribute::Kind::kOther;
      out.onnx_type = onnx::AttributeProto::AttributeType_Name(type);
      break;
  }
  return out;
}

void set_type(Value* value, const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return;
  const auto& tt = type.tensor_type();
  if (tt.elem_type() != 0) value->dtype = static_cast<DataType>(tt.elem_type());
  if (!tt.has_shape()) return;
  Shape shape;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return;
    shape.push_back(d.dim_value());
  }
  value->shape = std::move(shape);
  value->shape_known = true;
}

// Values by name while a graph is built; `outer` creates a reference to an enclosing graph's
// value for a name the graph does not define (subgraphs only).
struct Scope {
  Graph* g;
  std::map<std::string, int> ids;
  std::map<std::string, const onnx::TypeProto*> types;
  bool outer = false;

  int find(const std::string& name) {
    auto it = ids.find(name);
    if (it != ids.end()) return it->second;
    if (!outer) return ids.at(name);  // check_structure made sure every read is defined
    Value v;
    v.name = name;
    return ids[name] = g->add_value(std::move(v));
  }
};

void add_initializers(const onnx::GraphProto& gp, Scope* scope, std::set<std::string>* names) {
  for (const auto& init : gp.initializer()) {
    Value v;
    v.name = init.name();
    TensorData data = tensor_from_proto(init, "initializer '" + init.name() + "'");
    v.dtype = data.dtype;
    v.shape = std::move(data.shape);
    v.shape_known = true;
    v.is_constant = true;
    v.data = std::move(data.bytes);
    scope->ids[init.name()] = scope->g->add_value(std::move(v));
    names->insert(init.name());
  }
}

// A graph input (a subgraph's formal input), as the graph declares it.
void add_input(const onnx::ValueInfoProto& in, Scope* scope) {
  Value v;
  v.name = in.name();
  set_type(&v, in.type());
  v.graph_input = static_cast<int>(scope->g->inputs.size());
  const int id = scope->g->add_value(std::move(v));
  scope->ids[in.name()] = id;
  scope->g->inputs.push_back(id);
}

// The nodes of `gp` (sorted) in order; node i unnamed is named <op>_<index[i]>.
void add_nodes(const onnx::GraphProto& gp, const std::vector<int>& index, Scope* scope) {
  Graph& g = *scope->g;
  for (const auto& info : gp.value_info()) scope->types[info.name()] = &info.type();
  for (const auto& info : gp.output()) scope->types[info.name()] = &info.type();
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& np = gp.node(i);
    Node node;
    node.name = np.name().empty() ? np.op_type() + "_" + std::to_string(index[i]) : np.name();
    node.op_type = np.op_type();
    node.domain = normalized_domain(np.domain());
    for (const std::string& in : np.input()) node.inputs.push_back(in.empty() ? -1 : scope->find(in));
    for (const std::string& out : np.output()) {
      if (out.empty()) {
        node.outputs.push_back(-1);
        continue;
      }
      Value v;
      v.name = out;
      v.producer = static_cast<int>(g.nodes.size());
      auto t = scope->types.find(out);
      if (t != scope->types.end()) set_type(&v, *t->second);
      const int id = g.add_value(std::move(v));
      scope->ids[out] = id;
      node.outputs.push_back(id);
    }
    const std::string what = "node " + cat("'", node.name, "' (", node.op_type, ")");
    for (const auto& a : np.attribute())
      node.attrs[a.name()] = attribute_from_proto(a, what, g.opset);
    g.nodes.push_back(std::move(node));
  }
  for (const auto& out : gp.output()) {
    const int id = scope->find(out.name());
    g.values[id].graph_output = true;
    g.outputs.push_back(id);
  }
}

// A subgraph (If branch, Loop or Scan body): its formal inputs are always bound by the node, so
// one that an initializer also names is the input.
Graph subgraph_from_proto(const onnx::GraphProto& gp, int opset, const std::string& what) {
  Graph g;
  g.opset = opset;
  Scope scope{&g, {}, {}, /*outer=*/true};
  std::set<std::string> initializers;
  try {
    add_initializers(gp, &scope, &initializers);
  } catch (const ConvertError& e) {
    fail(what, ": ", e.what());
  }
  for (const auto& in : gp.input()) add_input(in, &scope);
  std::vector<int> index(gp.node_size());
  for (int i = 0; i < gp.node_size(); ++i) index[i] = i;
  add_nodes(gp, index, &scope);
  return g;
}

}  // namespace

Graph build_graph(const onnx::ModelProto& model, const std::vector<int>& original_index,
                  int opset) {
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.opset = opset;
  Scope scope{&g, {}, {}, /*outer=*/false};
  std::set<std::string> initializer_names;
  add_initializers(gp, &scope, &initializer_names);
  for (const auto& in : gp.input()) {
    if (initializer_names.count(in.name())) continue;  // a weight with a default: a weight
    add_input(in, &scope);
  }
  add_nodes(gp, original_index, &scope);
  return g;
}

}  // namespace jetplan::converter
