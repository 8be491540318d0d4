#include "converter/src/ir/graph.h"

#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

#include "converter/src/ir/error.h"

namespace jetplan::converter {

size_t dtype_size(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 4;
    case DataType::kUInt8: return 1;
    case DataType::kInt8: return 1;
    case DataType::kUInt16: return 2;
    case DataType::kInt16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kBool: return 1;
    case DataType::kFloat16: return 2;
    case DataType::kFloat64: return 8;
    case DataType::kUInt32: return 4;
    case DataType::kUInt64: return 8;
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kBFloat16: return 2;
    case DataType::kUndefined:
    case DataType::kString: return 0;
  }
  return 0;  // a number from the file outside the enum
}

const char* dtype_name(DataType type) {
  switch (type) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat32: return "float32";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUInt16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kFloat64: return "float64";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
  }
  // The element types ONNX added after libonnx 1.12 (IR versions 9 to 14), numbered from 17:
  // no plan holds them, but messages name them.
  static constexpr const char* kNewer[] = {
      "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4", "int4",
      "float4e2m1",   "float8e8m0",     "uint2",      "int2",           "float6e2m3", "float6e3m2"};
  const auto newer = static_cast<size_t>(type) - 17;
  return newer < std::size(kNewer) ? kNewer[newer] : "unknown";
}

int64_t shape_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t checked_bytes(const Shape& shape, size_t element_size) {
  int64_t bytes = static_cast<int64_t>(element_size);
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && bytes > kMaxTensorBytes / d)) return -1;
    bytes *= d;
  }
  return bytes <= kMaxTensorBytes ? bytes : -1;
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

bool moves_only_unit_dims(const Shape& in, const std::vector<int32_t>& perm) {
  if (perm.size() != in.size()) return false;
  int32_t last = -1;
  for (int32_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= in.size()) return false;
    if (in[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

int Graph::add_value(Value value) {
  values.push_back(std::move(value));
  return static_cast<int>(values.size()) - 1;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> users(values.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].dead) continue;
    for (int v : nodes[n].inputs)
      if (v >= 0) users[v].push_back(static_cast<int>(n));
  }
  return users;
}

void Graph::compact() {
  std::vector<Node> live;
  live.reserve(nodes.size());
  for (Node& n : nodes)
    if (!n.dead) live.push_back(std::move(n));
  nodes = std::move(live);
  for (Value& v : values) v.producer = -1;
  for (size_t n = 0; n < nodes.size(); ++n)
    for (int v : nodes[n].outputs)
      if (v >= 0) values[v].producer = static_cast<int>(n);
}

void Graph::replace_uses(int from, int to) {
  for (Node& n : nodes) {
    if (n.dead) continue;
    for (int& v : n.inputs)
      if (v == from) v = to;
  }
  for (int& v : outputs)
    if (v == from) v = to;
  values[to].graph_output = values[to].graph_output || values[from].graph_output;
  values[from].graph_output = false;
}

bool is_outer_reference(const Value& v) {
  return v.producer < 0 && !v.is_constant && v.graph_input < 0;
}

std::shared_ptr<const Graph> renamed_references(const Graph& sub,
                                                std::map<std::string, std::string> rename) {
  auto out = std::make_shared<Graph>(sub);
  for (const Value& v : sub.values)
    if (!is_outer_reference(v)) rename.erase(v.name);
  if (rename.empty()) return out;
  for (Value& v : out->values) {
    if (!is_outer_reference(v)) continue;
    auto it = rename.find(v.name);
    if (it != rename.end()) v.name = it->second;
  }
  for (Node& n : out->nodes)
    for (auto& [name, a] : n.attrs)
      if (a.kind == Attribute::Kind::kGraph && a.graph)
        a.graph = renamed_references(*a.graph, rename);
  return out;
}

std::string node_label(const Node& node) { return cat("'", node.name, "' (", node.op_type, ")"); }

namespace {

const Attribute* find_attr(const Node& node, const std::string& name, Attribute::Kind kind,
                           const char* kind_name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return nullptr;
  if (it->second.kind != kind)
    fail("node ", node_label(node), ": attribute '", name, "' must be ", kind_name);
  return &it->second;
}

}  // namespace

bool has_attr(const Node& node, const std::string& name) { return node.attrs.count(name) != 0; }

int64_t attr_int(const Node& node, const std::string& name, int64_t fallback) {
  const Attribute* a = find_attr(node, name, Attribute::Kind::kInt, "an int");
  return a ? a->i : fallback;
}

float attr_float(const Node& node, const std::string& name, float fallback) {
  const Attribute* a = find_attr(node, name, Attribute::Kind::kFloat, "a float");
  return a ? a->f : fallback;
}

std::string attr_string(const Node& node, const std::string& name, const std::string& fallback) {
  const Attribute* a = find_attr(node, name, Attribute::Kind::kString, "a string");
  return a ? a->s : fallback;
}

std::vector<int64_t> attr_ints(const Node& node, const std::string& name,
                               const std::vector<int64_t>& fallback) {
  const Attribute* a = find_attr(node, name, Attribute::Kind::kInts, "a list of ints");
  return a ? a->ints : fallback;
}

bool is_numeric(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt32:
    case DataType::kUInt64:
    case DataType::kBool: return true;
    default: return false;
  }
}

bool is_floating(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64;
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Converts each element from its stored type to Out.
template <typename Out>
std::vector<Out> read_as(DataType dtype, const std::vector<uint8_t>& bytes) {
  if (!is_numeric(dtype)) fail("cannot read constant elements of type ", dtype_name(dtype));
  const size_t size = dtype_size(dtype);
  std::vector<Out> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = bytes.data() + i * size;
    switch (dtype) {
      case DataType::kFloat32: out[i] = static_cast<Out>(load<float>(p)); break;
      case DataType::kFloat64: out[i] = static_cast<Out>(load<double>(p)); break;
      case DataType::kUInt8: out[i] = static_cast<Out>(load<uint8_t>(p)); break;
      case DataType::kInt8: out[i] = static_cast<Out>(load<int8_t>(p)); break;
      case DataType::kUInt16: out[i] = static_cast<Out>(load<uint16_t>(p)); break;
      case DataType::kInt16: out[i] = static_cast<Out>(load<int16_t>(p)); break;
      case DataType::kInt32: out[i] = static_cast<Out>(load<int32_t>(p)); break;
      case DataType::kInt64: out[i] = static_cast<Out>(load<int64_t>(p)); break;
      case DataType::kUInt32: out[i] = static_cast<Out>(load<uint32_t>(p)); break;
      case DataType::kUInt64: out[i] = static_cast<Out>(load<uint64_t>(p)); break;
      case DataType::kBool: out[i] = static_cast<Out>(load<uint8_t>(p) != 0); break;
      default: break;
    }
  }
  return out;
}

// Float-to-int casts of values outside the target range are undefined in C++; saturate.
template <typename T, typename In>
T saturate(In v) {
  if constexpr (std::is_floating_point_v<In> && std::is_integral_v<T>) {
    if (!(v == v)) return T(0);
    if (v <= static_cast<In>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<In>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

template <typename In>
std::vector<uint8_t> write_as(DataType dtype, const std::vector<In>& values) {
  if (!is_numeric(dtype)) fail("cannot write constant elements of type ", dtype_name(dtype));
  const size_t size = dtype_size(dtype);
  std::vector<uint8_t> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* p = bytes.data() + i * size;
    const In v = values[i];
    switch (dtype) {
      case DataType::kFloat32: store(p, static_cast<float>(v)); break;
      case DataType::kFloat64: store(p, static_cast<double>(v)); break;
      case DataType::kUInt8: store(p, saturate<uint8_t>(v)); break;
      case DataType::kInt8: store(p, saturate<int8_t>(v)); break;
      case DataType::kUInt16: store(p, saturate<uint16_t>(v)); break;
      case DataType::kInt16: store(p, saturate<int16_t>(v)); break;
      case DataType::kInt32: store(p, saturate<int32_t>(v)); break;
      case DataType::kInt64: store(p, saturate<int64_t>(v)); break;
      case DataType::kUInt32: store(p, saturate<uint32_t>(v)); break;
      case DataType::kUInt64: store(p, saturate<uint64_t>(v)); break;
      case DataType::kBool: store(p, static_cast<uint8_t>(v != In(0))); break;
      default: break;
    }
  }
  return bytes;
}

std::vector<int64_t> read_ints_of(DataType dtype, const std::vector<uint8_t>& bytes) {
  if (!is_floating(dtype)) return read_as<int64_t>(dtype, bytes);
  std::vector<double> f = read_as<double>(dtype, bytes);
  std::vector<int64_t> out(f.size());
  for (size_t i = 0; i < f.size(); ++i) out[i] = saturate<int64_t>(f[i]);
  return out;
}

}  // namespace

std::vector<double> read_doubles(const TensorData& d) { return read_as<double>(d.dtype, d.bytes); }
std::vector<int64_t> read_ints(const TensorData& d) { return read_ints_of(d.dtype, d.bytes); }
std::vector<double> read_doubles(const Value& v) { return read_as<double>(v.dtype, v.data); }
std::vector<int64_t> read_ints(const Value& v) { return read_ints_of(v.dtype, v.data); }
std::vector<uint8_t> write_doubles(DataType dtype, const std::vector<double>& values) {
  return write_as(dtype, values);
}
std::vector<uint8_t> write_ints(DataType dtype, const std::vector<int64_t>& values) {
  return write_as(dtype, values);
}

bool to_plan_dtype(DataType dtype, fb::DType* out) {
  switch (dtype) {
    case DataType::kFloat32: *out = fb::DType::Float32; return true;
    case DataType::kFloat16: *out = fb::DType::Float16; return true;
    case DataType::kInt8: *out = fb::DType::Int8; return true;
    case DataType::kUInt8: *out = fb::DType::UInt8; return true;
    case DataType::kInt32: *out = fb::DType::Int32; return true;
    case DataType::kInt64: *out = fb::DType::Int64; return true;
    case DataType::kBool: *out = fb::DType::Bool; return true;
    case DataType::kFloat64: *out = fb::DType::Float64; return true;
    case DataType::kInt16: *out = fb::DType::Int16; return true;
    case DataType::kUInt16: *out = fb::DType::UInt16; return true;
    case DataType::kUInt32: *out = fb::DType::UInt32; return true;
    case DataType::kUInt64: *out = fb::DType::UInt64; return true;
    case DataType::kBFloat16: *out = fb::DType::BFloat16; return true;
    case DataType::kUndefined:
    case DataType::kString:
    case DataType::kComplex64:
    case DataType::kComplex128: break;
  }
  return false;
}

bool is_plan_dtype(DataType dtype) {
  fb::DType unused;
  return to_plan_dtype(dtype, &unused);
}

const char* plan_dtype_list() {
  return "float32, float16, bfloat16, float64, int8, uint8, int16, uint16, int32, uint32, int64, "
         "uint64 and bool";
}

bool is_limited_dtype(DataType dtype) {
  return dtype == DataType::kInt16 || dtype == DataType::kUInt16 || dtype == DataType::kUInt32 ||
         dtype == DataType::kUInt64 || dtype == DataType::kBFloat16;
}

}  // namespace jetplan::converter
