#include "converter/src/import/widen_floats.h"

#include <cstring>
#include <set>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"

namespace jetplan::converter {
namespace {

bool narrow(int32_t onnx_type) {
  return onnx_type == onnx::TensorProto::FLOAT16 || onnx_type == onnx::TensorProto::BFLOAT16;
}

float narrow_to_float(int32_t onnx_type, uint16_t bits) {
  return onnx_type == onnx::TensorProto::FLOAT16 ? kernels::half_to_float(bits)
                                                 : kernels::bfloat16_to_float(bits);
}

// The elements of a float16 or bfloat16 tensor as float32 raw_data. Data that does not hold the
// dims' elements is refused here, naming the tensor in its own type (a tensor whose data stays
// in an external file is left as it is: the import names it).
void widen_tensor(onnx::TensorProto* t) {
  if (!narrow(t->data_type()) || t->data_location() == onnx::TensorProto::EXTERNAL) return;
  const char* type = t->data_type() == onnx::TensorProto::FLOAT16 ? "float16" : "bfloat16";
  const std::string what = t->name().empty() ? std::string("a tensor attribute") : cat("tensor '", t->name(), "'");
  Shape dims(t->dims().begin(), t->dims().end());
  const int64_t bytes = checked_bytes(dims, 2);
  if (bytes < 0) fail(what, " of shape ", shape_str(dims), " is not a tensor jetplan can hold");
  const int64_t count = bytes / 2;
  std::vector<uint16_t> bits;
  if (!t->raw_data().empty()) {
    if (int64_t(t->raw_data().size()) != bytes)
      fail(what, ": raw_data holds ", t->raw_data().size(), " bytes, but ", shape_str(dims), " ",
           type, " needs ", bytes);
    bits.resize(size_t(count));
    std::memcpy(bits.data(), t->raw_data().data(), t->raw_data().size());
  } else {
    if (t->int32_data_size() != count)
      fail(what, " holds ", t->int32_data_size(), " values, but ", shape_str(dims), " ", type,
           " needs ", count);
    for (int32_t v : t->int32_data()) bits.push_back(static_cast<uint16_t>(v));
  }
  std::string raw(bits.size() * 4, '\0');
  for (size_t i = 0; i < bits.size(); ++i) {
    const float f = narrow_to_float(t->data_type(), bits[i]);
    std::memcpy(&raw[i * 4], &f, 4);
  }
  t->clear_int32_data();
  t->set_raw_data(std::move(raw));
  t->set_data_type(onnx::TensorProto::FLOAT);
}

void widen_type(onnx::TypeProto* type) {
  if (type->has_tensor_type()) {
    if (narrow(type->tensor_type().elem_type()))
      type->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  } else if (type->has_sequence_type()) {
    widen_type(type->mutable_sequence_type()->mutable_elem_type());
  } else if (type->has_optional_type()) {
    widen_type(type->mutable_optional_type()->mutable_elem_type());
  }
}

void widen_graph(onnx::GraphProto* graph);

// Cast's `to`, DequantizeLinear's `output_dtype` and every `dtype` (EyeLike, the random
// generators) name a type; tensors and subgraphs hold data and types.
void widen_node(onnx::NodeProto* node) {
  for (auto& a : *node->mutable_attribute()) {
    const bool names_type = (a.name() == "to" && node->op_type() == "Cast") ||
                            a.name() == "dtype" ||
                            (a.name() == "output_dtype" && node->op_type() == "DequantizeLinear");
    if (names_type && a.has_i() && narrow(static_cast<int32_t>(a.i())))
      a.set_i(onnx::TensorProto::FLOAT);
    if (a.has_t()) widen_tensor(a.mutable_t());
    for (auto& t : *a.mutable_tensors()) widen_tensor(&t);
    if (a.has_g()) widen_graph(a.mutable_g());
    for (auto& g : *a.mutable_graphs()) widen_graph(&g);
  }
}

void widen_graph(onnx::GraphProto* graph) {
  for (auto& t : *graph->mutable_initializer()) widen_tensor(&t);
  for (auto* list : {graph->mutable_input(), graph->mutable_output(), graph->mutable_value_info()})
    for (auto& v : *list)
      if (v.has_type()) widen_type(v.mutable_type());
  for (auto& n : *graph->mutable_node()) widen_node(&n);
}

Node cast_node(const std::string& name, int from, int to, DataType type) {
  Node n;
  n.name = name;
  n.op_type = "Cast";
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = static_cast<int64_t>(type);
  n.attrs["to"] = a;
  n.inputs = {from};
  n.outputs = {to};
  return n;
}

// A float32 value in the place of value `v` (float32 still): its shape, its data.
int float32_twin(Graph& g, GraphNames& names, int v) {
  const std::string name = names.unique(g.values[static_cast<size_t>(v)].name + ":float32");
  const int w = new_value(g, name, DataType::kFloat32, g.values[static_cast<size_t>(v)].shape);
  const Value& of = g.values[static_cast<size_t>(v)];
  g.values[static_cast<size_t>(w)].shape_known = of.shape_known;
  g.values[static_cast<size_t>(w)].is_constant = of.is_constant;
  g.values[static_cast<size_t>(w)].data = of.data;
  return w;
}

// The float32 data of a constant, as `type` (exact: the values came from that type).
std::vector<uint8_t> narrowed(DataType type, const std::vector<uint8_t>& bytes) {
  std::vector<uint8_t> out(bytes.size() / 2);
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    float f;
    std::memcpy(&f, &bytes[i], 4);
    const uint16_t h = type == DataType::kFloat16 ? kernels::half_from_float(f)
                                                  : kernels::bfloat16_from_float(f);
    std::memcpy(&out[i / 2], &h, 2);
  }
  return out;
}

void redirect_reads(Graph& g, int from, int to) {
  for (Node& n : g.nodes)
    for (int& i : n.inputs)
      if (i == from) i = to;
}

}  // namespace

NarrowValues widen_floats(onnx::ModelProto* model) {
  NarrowValues out;
  onnx::GraphProto* graph = model->mutable_graph();
  // The narrow values a CastLike may take its type from: initializers, graph inputs, Constants
  // and narrow Casts.
  std::map<std::string, DataType> known;
  for (const auto& init : graph->initializer())
    if (narrow(init.data_type())) known[init.name()] = static_cast<DataType>(init.data_type());
  std::set<std::string> initializers;
  for (const auto& init : graph->initializer()) initializers.insert(init.name());
  for (const auto* list : {&graph->input(), &graph->output()})
    for (const auto& v : *list)
      if (v.type().has_tensor_type() && narrow(v.type().tensor_type().elem_type())) {
        const auto type = static_cast<DataType>(v.type().tensor_type().elem_type());
        if (list == &graph->output() || initializers.count(v.name()) == 0)
          out.bindings[v.name()] = type;
        if (list == &graph->input()) known[v.name()] = type;
      }
  // In node order (sorted by the import): a narrow Cast's output is a known narrow value too.
  for (const auto& n : graph->node()) {
    if (n.output_size() != 1) continue;
    if (n.op_type() == "Constant") {
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t() && narrow(a.t().data_type()))
          known[n.output(0)] = static_cast<DataType>(a.t().data_type());
    } else if (n.op_type() == "Cast") {
      for (const auto& a : n.attribute())
        if (a.name() == "to" && narrow(static_cast<int32_t>(a.i())))
          out.casts[n.output(0)] = known[n.output(0)] = static_cast<DataType>(a.i());
    } else if (n.op_type() == "CastLike" && n.input_size() == 2) {
      auto it = known.find(n.input(1));
      if (it != known.end()) out.casts[n.output(0)] = known[n.output(0)] = it->second;
    }
  }
  widen_graph(graph);
  return out;
}

namespace {

// Whether input k of node n reads a narrow value as it is: a Cast's input and a CastLike's x
// (what they convert); a CastLike's `like` gives its type, which must stay float32.
bool reads_as_it_is(const Node& n, size_t k) {
  return n.op_type == "Cast" || (n.op_type == "CastLike" && k == 0);
}

bool has_subgraphs(const Graph& g) {
  for (const Node& n : g.nodes)
    for (const auto& [name, a] : n.attrs)
      if (a.kind == Attribute::Kind::kGraph) return true;
  return false;
}

// The Cast or CastLike writing value `v` writes it in `type` again (a CastLike becomes that
// Cast); a Cast to float32 after it feeds the readers that are no Casts (and the subgraphs' by
// name: `outer` gets the renaming). Returns the float32 value, -1 when nothing reads one.
int round_at_cast(Graph& g, GraphNames& names, size_t node, int v, DataType type,
                  std::map<std::string, std::string>* outer) {
  {
    Node& cast = g.nodes[node];
    cast.op_type = "Cast";
    cast.inputs.resize(1);
    Attribute to;
    to.kind = Attribute::Kind::kInt;
    to.i = static_cast<int64_t>(type);
    cast.attrs.clear();
    cast.attrs["to"] = to;
  }
  g.values[static_cast<size_t>(v)].dtype = type;
  int w = has_subgraphs(g) ? float32_twin(g, names, v) : -1;
  for (Node& n : g.nodes)
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != v || reads_as_it_is(n, k)) continue;
      if (w < 0) w = float32_twin(g, names, v);
      n.inputs[k] = w;
    }
  if (w < 0) return -1;
  (*outer)[g.values[static_cast<size_t>(v)].name] = g.values[static_cast<size_t>(w)].name;
  Node up = cast_node(names.unique(g.nodes[node].name + ":to_float32"), v, w, DataType::kFloat32);
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(node) + 1, std::move(up));
  return w;
}

}  // namespace

void narrow_values(Graph& g, const NarrowValues& narrow) {
  if (narrow.bindings.empty() && narrow.casts.empty()) return;
  GraphNames names(g);
  // Subgraphs (If branches, Loop and Scan bodies) read enclosing values by name: those that
  // become narrow are read there by their float32 twins' names.
  std::map<std::string, std::string> outer;
  // Casts first: their outputs are narrow then, and a narrow output they write needs no Cast
  // at the end.
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    if ((n.op_type != "Cast" && n.op_type != "CastLike") || n.outputs.size() != 1 ||
        n.outputs[0] < 0)
      continue;
    auto it = narrow.casts.find(g.values[static_cast<size_t>(n.outputs[0])].name);
    if (it != narrow.casts.end()) round_at_cast(g, names, k, n.outputs[0], it->second, &outer);
  }
  std::vector<Node> front;
  std::set<int> done;
  for (int v : g.inputs) {
    auto it = narrow.bindings.find(g.values[static_cast<size_t>(v)].name);
    if (it == narrow.bindings.end() || !done.insert(v).second) continue;
    const int w = float32_twin(g, names, v);
    redirect_reads(g, v, w);
    Value& in = g.values[static_cast<size_t>(v)];
    in.dtype = it->second;
    outer[in.name] = g.values[static_cast<size_t>(w)].name;
    front.push_back(cast_node(names.unique(in.name + ":to_float32"), v, w, DataType::kFloat32));
  }
  for (int v : g.outputs) {
    auto it = narrow.bindings.find(g.values[static_cast<size_t>(v)].name);
    if (it == narrow.bindings.end() || !done.insert(v).second ||
        g.values[static_cast<size_t>(v)].dtype == it->second)
      continue;
    const int w = float32_twin(g, names, v);
    // Casts read the output as it is (rounded); the other readers its float32 value.
    for (Node& n : g.nodes)
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == v && !reads_as_it_is(n, k)) n.inputs[k] = w;
    Value& out = g.values[static_cast<size_t>(v)];
    out.dtype = it->second;
    outer[out.name] = g.values[static_cast<size_t>(w)].name;
    if (out.is_constant) {
      out.data = narrowed(out.dtype, out.data);
      continue;
    }
    // The Cast to the output's type goes right after the node that writes it now.
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      bool writes = false;
      for (int& o : g.nodes[k].outputs)
        if (o == v) o = w, writes = true;
      if (!writes) continue;
      Node down = cast_node(names.unique(out.name + ":to_" + dtype_name(out.dtype)), w, v,
                            out.dtype);
      g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(k) + 1, std::move(down));
      break;
    }
  }
  if (!outer.empty())
    for (Node& n : g.nodes)
      for (auto& [name, a] : n.attrs)
        if (a.kind == Attribute::Kind::kGraph && a.graph) a.graph = renamed_references(*a.graph, outer);
  std::vector<Node> nodes = std::move(front);
  for (Node& n : g.nodes) nodes.push_back(std::move(n));
  g.nodes = std::move(nodes);
  g.compact();
}

}  // namespace jetplan::converter
