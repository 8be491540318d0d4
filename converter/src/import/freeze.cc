#include "converter/src/import/freeze.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph.h"
#include "kernels/cpu/half.h"
#include "runtime/tools/npy.h"

namespace jetplan::converter {
namespace {

// What the model declares of a graph input: its element type and dims (-1: symbolic).
struct Declared {
  DataType dtype = DataType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;

  std::string shape_text() const {
    if (!has_shape) return "of no declared shape";
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i)
      s += (i ? "," : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
    return s + "]";
  }
};

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw OptionError(cat("--freeze ", name, ": ", why));
}

template <typename T>
void append(std::vector<uint8_t>* out, T v) {
  const size_t at = out->size();
  out->resize(at + sizeof(T));
  std::memcpy(out->data() + at, &v, sizeof(T));
}

uint16_t bfloat16_from_float(float f) {  // round to nearest even, as a float32 cast rounds
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// One literal element of `dtype` appended to *out; false with *why when it is none.
bool element_bytes(const std::string& text, DataType dtype, std::vector<uint8_t>* out,
                   std::string* why) {
  if (text.empty()) {
    *why = "an empty element";
    return false;
  }
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (dtype == DataType::kBool) {
    if (text != "true" && text != "false" && text != "1" && text != "0") {
      *why = cat("'", text, "' is not a bool (true, false, 1 or 0)");
      return false;
    }
    append<uint8_t>(out, text == "true" || text == "1");
    return true;
  }
  if (dtype == DataType::kFloat32 || dtype == DataType::kFloat64 ||
      dtype == DataType::kFloat16 || dtype == DataType::kBFloat16) {
    const double v = std::strtod(s, &end);
    if (end == s || *end != '\0') {
      *why = cat("'", text, "' is not a number");
      return false;
    }
    const double max = dtype == DataType::kFloat16    ? 65504.0
                       : dtype == DataType::kFloat64 ? std::numeric_limits<double>::max()
                                                     : std::numeric_limits<float>::max();
    if (std::isfinite(v) && std::fabs(v) > max) {
      *why = cat("'", text, "' is out of the range of ", dtype_name(dtype));
      return false;
    }
    if (dtype == DataType::kFloat64) append<double>(out, v);
    if (dtype == DataType::kFloat32) append<float>(out, static_cast<float>(v));
    if (dtype == DataType::kFloat16) append<uint16_t>(out, kernels::half_from_double(v));
    if (dtype == DataType::kBFloat16)
      append<uint16_t>(out, bfloat16_from_float(static_cast<float>(v)));
    return true;
  }
  struct IntRange {
    DataType dtype;
    long double lo, hi;
  };
  static const IntRange kInts[] = {
      {DataType::kInt8, -128.0L, 127.0L},
      {DataType::kInt16, -32768.0L, 32767.0L},
      {DataType::kInt32, -2147483648.0L, 2147483647.0L},
      {DataType::kInt64, -9223372036854775808.0L, 9223372036854775807.0L},
      {DataType::kUInt8, 0.0L, 255.0L},
      {DataType::kUInt16, 0.0L, 65535.0L},
      {DataType::kUInt32, 0.0L, 4294967295.0L},
      {DataType::kUInt64, 0.0L, 18446744073709551615.0L},
  };
  for (const IntRange& r : kInts) {
    if (r.dtype != dtype) continue;
    const bool is_unsigned = r.lo == 0.0L;
    // strtoull would take "-1" as a huge number: a sign makes an unsigned literal no number.
    const bool negative = is_unsigned && text[0] == '-';
    const uint64_t u = is_unsigned && !negative ? std::strtoull(s, &end, 10) : 0;
    const int64_t i = is_unsigned ? 0 : std::strtoll(s, &end, 10);
    if (negative || end == s || *end != '\0') {
      *why = cat("'", text, "' is not ", is_unsigned ? "a non-negative integer" : "an integer");
      return false;
    }
    const long double v = is_unsigned ? static_cast<long double>(u) : static_cast<long double>(i);
    if (errno == ERANGE || v < r.lo || v > r.hi) {
      *why = cat("'", text, "' is out of the range of ", dtype_name(dtype));
      return false;
    }
    const uint64_t bits = is_unsigned ? u : static_cast<uint64_t>(i);
    for (size_t b = 0; b < dtype_size(dtype); ++b)
      out->push_back(static_cast<uint8_t>(bits >> (8 * b)));
    return true;
  }
  *why = cat("the input is ", dtype_name(dtype), ", which --freeze cannot give");
  return false;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// A literal's bytes and shape, against what the input declares.
TensorData parse_literal(const std::string& name, const std::string& text, const Declared& d) {
  TensorData t;
  t.dtype = d.dtype;
  std::string why;
  const std::string body = trimmed(text);
  if (!body.empty() && body.front() == '[') {
    if (body.back() != ']')
      refuse(name, cat("'", text, "' opens a list with '[' but does not close it with ']'"));
    const std::string inner = trimmed(body.substr(1, body.size() - 2));
    int64_t n = 0;
    for (size_t at = 0; !inner.empty() && at <= inner.size(); ++n) {
      const size_t comma = std::min(inner.find(',', at), inner.size());
      if (!element_bytes(trimmed(inner.substr(at, comma - at)), d.dtype, &t.bytes, &why))
        refuse(name, cat("element ", n, " of '", text, "': ", why));
      at = comma + 1;
    }
    if (d.has_shape && (d.dims.size() != 1 || (d.dims[0] >= 0 && d.dims[0] != n)))
      refuse(name, cat("input '", name, "' is ", d.shape_text(), "; the list gives [", n, "]"));
    t.shape = {n};
    return t;
  }
  if (!element_bytes(body, d.dtype, &t.bytes, &why)) refuse(name, why);
  for (int64_t dim : d.dims)
    if (dim > 1 || dim == 0)
      refuse(name, cat("input '", name, "' is ", d.shape_text(),
                       "; a scalar fills a shape of one element only (give a .npy)"));
  t.shape.assign(d.dims.size(), 1);  // symbolic dims become 1
  return t;
}

TensorData read_npy_value(const std::string& name, const std::string& path, const Declared& d) {
  fb::DType plan_dtype;
  if (!to_plan_dtype(d.dtype, &plan_dtype))
    refuse(name, cat("the input is ", dtype_name(d.dtype), ", which --freeze cannot give"));
  const jp_dtype jp = static_cast<jp_dtype>(plan_dtype);  // numbered alike (schemas/plan.fbs)
  tools::NpyArray npy;
  std::string error;
  if (!tools::read_npy(path, &npy, &error)) refuse(name, error);
  if (npy.dtype != tools::npy_descr(jp))
    refuse(name, cat("'", path, "' holds '", npy.dtype, "' elements, but input '", name, "' is ",
                     dtype_name(d.dtype), " ('", tools::npy_descr(jp), "')"));
  bool shape_ok = !d.has_shape || npy.shape.size() == d.dims.size();
  for (size_t i = 0; shape_ok && d.has_shape && i < d.dims.size(); ++i)
    shape_ok = d.dims[i] < 0 || d.dims[i] == npy.shape[i];
  if (!shape_ok)
    refuse(name, cat("'", path, "' is ", shape_str(npy.shape), ", but input '", name, "' is ",
                     d.shape_text()));
  const int64_t bytes = checked_bytes(npy.shape, dtype_size(d.dtype));
  if (bytes < 0 || npy.data.size() < static_cast<size_t>(bytes))
    refuse(name, cat("'", path, "' holds fewer bytes than its shape ", shape_str(npy.shape),
                     " needs"));
  TensorData t;
  t.dtype = d.dtype;
  t.shape = npy.shape;
  t.bytes.assign(npy.data.begin(), npy.data.begin() + bytes);
  return t;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void freeze_inputs(onnx::GraphProto* graph, const std::set<std::string>& initializers,
                   const std::map<std::string, std::string>& freeze) {
  if (freeze.empty()) return;
  std::string input_names;
  for (const auto& in : graph->input())
    if (!initializers.count(in.name()))
      input_names += (input_names.empty() ? "" : ", ") + in.name();
  for (const auto& [name, text] : freeze) {
    int at = -1;
    for (int i = 0; i < graph->input_size(); ++i)
      if (graph->input(i).name() == name && !initializers.count(name)) at = i;
    if (at < 0)
      throw OptionError(cat(
          "--freeze names '", name, "', which is ",
          initializers.count(name) ? "an initializer (a weight), not a graph input"
                                   : "not a graph input",
          " (graph inputs: ", input_names.empty() ? "none" : input_names, ")"));
    const onnx::ValueInfoProto& in = graph->input(at);
    if (!in.type().has_tensor_type()) refuse(name, cat("input '", name, "' is not a tensor"));
    const auto& tt = in.type().tensor_type();
    Declared d;
    d.dtype = static_cast<DataType>(tt.elem_type());
    d.has_shape = tt.has_shape();
    for (const auto& dim : tt.shape().dim())
      d.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    if (!is_plan_dtype(d.dtype))
      refuse(name, cat("input '", name, "' is ", dtype_name(d.dtype), ", which --freeze cannot give"));
    const TensorData value =
        ends_with(text, ".npy") ? read_npy_value(name, text, d) : parse_literal(name, text, d);

    onnx::TensorProto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(static_cast<int32_t>(value.dtype));
    for (int64_t dim : value.shape) t->add_dims(dim);
    t->set_raw_data(std::string(value.bytes.begin(), value.bytes.end()));
    graph->mutable_input()->DeleteSubrange(at, 1);
  }
}

}  // namespace jetplan::converter
