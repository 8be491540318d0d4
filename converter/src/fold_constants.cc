// Constant folding: shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains)
// and weight preprocessing that exporters leave in the graph are evaluated at conversion, so
// the plan only holds steps on run-time data. Data movement ops here are dtype-agnostic byte
// moves; numeric ops are in fold_arith.cc.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include "converter/src/error.h"
#include "converter/src/fold_eval.h"
#include "converter/src/passes.h"
#include "converter/src/shape_ops.h"
#include "converter/src/table.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/tensor_ops.h"

namespace jetplan::converter {
namespace fold {

bool fits(const Shape& shape, DataType dtype) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && bytes > kMaxFoldBytes / static_cast<uint64_t>(d)) return false;
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes <= kMaxFoldBytes;
}

std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  const size_t rank = out.size();
  const size_t lead = rank - in.size();
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > lead;) {
    const int64_t d = in[i - lead];
    stride[i] = d == 1 ? 0 : s;
    s *= d;
  }
  const int64_t total = shape_count(out);
  std::vector<int64_t> index(total);
  std::vector<int64_t> counter(rank, 0);
  int64_t at = 0;
  for (int64_t k = 0; k < total; ++k) {
    index[k] = at;
    for (size_t i = rank; i-- > 0;) {
      at += stride[i];
      if (++counter[i] < out[i]) break;
      at -= stride[i] * out[i];
      counter[i] = 0;
    }
  }
  return index;
}

// ---- Rules of the tensor ops (fold_eval.h) ----

namespace {

// Input `i` of the node when it is present and constant; nullptr when it is absent (or an
// omitted optional input); false with *why when the model computes it at run time.
bool constant_input(const Graph& g, const Node& node, size_t i, const char* what,
                    const Value** out, std::string* why) {
  *out = nullptr;
  if (i >= node.inputs.size() || node.inputs[i] < 0) return true;
  const Value& v = g.values[node.inputs[i]];
  if (!v.is_constant) {
    *why = cat("its ", what, " input '", v.name, "' is computed at run time (jetplan needs it constant)");
    return false;
  }
  if (!is_numeric(v.dtype))
    fail("node ", node_label(node), ": its ", what, " input '", v.name, "' is ",
         dtype_name(v.dtype), ", not a number type");
  *out = &v;
  return true;
}

}  // namespace

std::vector<int32_t> transpose_perm(const Node& node, int64_t rank) {
  std::vector<int64_t> perm = attr_ints(node, "perm", {});
  if (!has_attr(node, "perm"))
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && perm[i] < rank && !seen[perm[i]];
    if (ok) seen[perm[i]] = true;
  }
  if (!ok)
    fail("node ", node_label(node), ": perm ", shape_str(perm), " is not a permutation of the ",
         rank, " input dims");
  return std::vector<int32_t>(perm.begin(), perm.end());
}

bool slice_spec(const Graph& g, const Node& node, const Shape& x, SliceSpec* spec,
                std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_axes = false, have_steps = false;
  if (g.opset < 10) {
    if (!has_attr(node, "starts") || !has_attr(node, "ends"))
      fail("node ", node_label(node), ": the starts or ends attribute is missing");
    starts = attr_ints(node, "starts", {});
    ends = attr_ints(node, "ends", {});
    axes = attr_ints(node, "axes", {});
    have_axes = has_attr(node, "axes");
  } else {
    const char* names[] = {"starts", "ends", "axes", "steps"};
    std::vector<int64_t>* lists[] = {&starts, &ends, &axes, &steps};
    for (size_t i = 0; i < 4; ++i) {
      const Value* v;
      if (!constant_input(g, node, i + 1, names[i], &v, why)) return false;
      if (v == nullptr && i < 2)
        fail("node ", node_label(node), ": the ", names[i], " input is missing");
      if (v != nullptr) *lists[i] = read_ints(*v);
      if (i == 2) have_axes = v != nullptr;
      if (i == 3) have_steps = v != nullptr;
    }
  }
  const size_t n = starts.size();
  if (!have_axes)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (!have_steps) steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    fail("node ", node_label(node), ": starts, ends, axes and steps differ in length (", n, ", ",
         ends.size(), ", ", axes.size(), ", ", steps.size(), ")");
  spec->starts.assign(rank, 0);
  spec->steps.assign(rank, 1);
  spec->out = x;
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = normalize_axis(node, axes[k], rank);
    if (seen[axis]) fail("node ", node_label(node), ": axis ", axis, " is sliced twice");
    seen[axis] = true;
    const int64_t dim = x[axis], step = steps[k];
    if (step == 0) fail("node ", node_label(node), ": Slice step 0 on axis ", axis);
    // Negative values count from the end; anything before the start maps to -1, which the
    // clamps below treat as ONNX does (clamping before the addition keeps INT64_MIN in range).
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -dim ? -1 : s + dim;
    if (e < 0) e = e < -dim ? -1 : e + dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    // ceil(|e - s| / |step|) without overflow for any step.
    const int64_t span = step > 0 ? e - s : s - e;
    const int64_t stride = step > 0 ? step : (step == INT64_MIN ? INT64_MAX : -step);
    spec->starts[axis] = s;
    spec->steps[axis] = step;
    spec->out[axis] = span > 0 ? (span - 1) / stride + 1 : 0;
  }
  return true;
}

bool split_spec(const Graph& g, const Node& node, const Shape& x, SplitSpec* spec,
                std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) fail("node ", node_label(node), ": Split of a scalar");
  spec->axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  const int64_t dim = x[spec->axis];
  const int64_t outputs = static_cast<int64_t>(node.outputs.size());
  spec->sizes.clear();
  if (g.opset < 13) {
    spec->sizes = attr_ints(node, "split", {});
  } else {
    const Value* split;
    if (!constant_input(g, node, 1, "split", &split, why)) return false;
    if (split != nullptr) spec->sizes = read_ints(*split);
  }
  if (spec->sizes.empty() && has_attr(node, "num_outputs")) {
    // Opset 18: equal parts of ceil(dim / n), the last one smaller when they do not divide.
    const int64_t parts = attr_int(node, "num_outputs", 0);
    if (parts != outputs)
      fail("node ", node_label(node), ": num_outputs is ", parts, " but the node has ", outputs,
           " outputs");
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      spec->sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  } else if (spec->sizes.empty()) {
    if (outputs < 1 || dim % outputs != 0)
      fail("node ", node_label(node), ": dim ", dim, " does not split into ", outputs,
           " equal parts");
    spec->sizes.assign(outputs, dim / outputs);
  }
  int64_t total = 0;
  for (int64_t s : spec->sizes) {
    if (s < 0 || s > dim) fail("node ", node_label(node), ": split size ", s, " is out of range");
    total += s;
  }
  if (static_cast<int64_t>(spec->sizes.size()) != outputs || total != dim)
    fail("node ", node_label(node), ": split ", shape_str(spec->sizes), " does not cut dim ", dim,
         " into ", outputs, " outputs");
  return true;
}

bool pad_value_bytes(double v, DataType dtype, unsigned char out[8]) {
  auto integral_in = [&](double lo, double hi) {
    return std::isfinite(v) && v == std::trunc(v) && v >= lo && v <= hi;
  };
  auto store = [&](auto value) { std::memcpy(out, &value, sizeof value); };
  switch (dtype) {
    case DataType::kFloat32: store(static_cast<float>(v)); return true;
    case DataType::kFloat16: store(kernels::half_from_double(v)); return true;
    case DataType::kFloat64: store(v); return true;
    case DataType::kInt8:
      if (!integral_in(-128, 127)) return false;
      store(static_cast<int8_t>(v));
      return true;
    case DataType::kUInt8:
    case DataType::kBool:
      if (!integral_in(0, dtype == DataType::kBool ? 1 : 255)) return false;
      store(static_cast<uint8_t>(v));
      return true;
    case DataType::kInt32:
      if (!integral_in(-2147483648.0, 2147483647.0)) return false;
      store(static_cast<int32_t>(v));
      return true;
    case DataType::kInt64:
      if (!integral_in(-9223372036854775808.0, 9223372036854774784.0)) return false;
      store(static_cast<int64_t>(v));
      return true;
    default: return false;
  }
}

bool pad_spec(const Graph& g, const Node& node, const Shape& x, DataType dtype, PadSpec* spec,
              std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> pads, axes;
  double value = 0.0;
  if (g.opset < 11) {
    const char* name = g.opset < 2 ? "paddings" : "pads";
    if (!has_attr(node, name)) fail("node ", node_label(node), ": the ", name, " attribute is missing");
    pads = attr_ints(node, name, {});
    value = attr_float(node, "value", 0.f);
  } else {
    const Value *p, *c, *a;
    if (!constant_input(g, node, 1, "pads", &p, why) ||
        !constant_input(g, node, 2, "constant_value", &c, why) ||
        !constant_input(g, node, 3, "axes", &a, why))
      return false;
    if (p == nullptr) fail("node ", node_label(node), ": the pads input is missing");
    pads = read_ints(*p);
    if (c != nullptr) {
      if (shape_count(c->shape) != 1)
        fail("node ", node_label(node), ": constant_value has ", shape_count(c->shape),
             " elements, not one");
      if (c->dtype != dtype)
        fail("node ", node_label(node), ": constant_value is ", dtype_name(c->dtype),
             " but the input is ", dtype_name(dtype));
      if (is_floating(c->dtype) || c->dtype == DataType::kFloat16) {
        value = numbers(c->dtype, c->data)[0];
      } else {
        const int64_t i = read_ints(*c)[0];
        value = static_cast<double>(i);
        if (static_cast<int64_t>(value) != i) {
          *why = cat("constant_value ", i, " has no exact double (the plan carries a double)");
          return false;
        }
      }
    }
    if (a != nullptr) axes = read_ints(*a);
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  const std::string mode = attr_string(node, "mode", "constant");
  if (mode == "constant")
    spec->mode = fb::PadMode::Constant;
  else if (mode == "reflect")
    spec->mode = fb::PadMode::Reflect;
  else if (mode == "edge")
    spec->mode = fb::PadMode::Edge;
  else if (mode == "wrap")
    spec->mode = fb::PadMode::Wrap;
  else
    fail("node ", node_label(node), ": unknown pad mode '", mode, "'");
  const size_t n = axes.size();
  if (pads.size() != 2 * n)
    fail("node ", node_label(node), ": pads has ", pads.size(), " entries, expected ", 2 * n);
  spec->begin.assign(rank, 0);
  spec->out = x;
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = normalize_axis(node, axes[k], rank);
    if (seen[axis]) fail("node ", node_label(node), ": axis ", axis, " is padded twice");
    seen[axis] = true;
    const int64_t begin = pads[k], end = pads[k + n];
    if (begin < -kMaxTensorBytes || begin > kMaxTensorBytes || end < -kMaxTensorBytes ||
        end > kMaxTensorBytes || x[axis] + begin + end < 0)
      fail("node ", node_label(node), ": pads ", begin, " and ", end, " do not fit dim ", x[axis]);
    spec->begin[axis] = begin;
    spec->out[axis] = x[axis] + begin + end;
    const int64_t kept = x[axis] - std::max<int64_t>(0, -begin) - std::max<int64_t>(0, -end);
    if (spec->mode != fb::PadMode::Constant && kept <= 0 && spec->out[axis] > 0) {
      *why = cat(mode, " padding of dim ", axis, " after cropping it to nothing");
      return false;
    }
  }
  unsigned char bytes[8];
  if (!pad_value_bytes(value, dtype, bytes))
    fail("node ", node_label(node), ": pad value ", value, " does not fit ", dtype_name(dtype));
  spec->value = value;
  return true;
}

bool tile_shape(const Graph& g, const Node& node, const Shape& x, Shape* out, std::string* why) {
  const Value* r;
  if (!constant_input(g, node, 1, "repeats", &r, why)) return false;
  if (r == nullptr) fail("node ", node_label(node), ": the repeats input is missing");
  const std::vector<int64_t> repeats = read_ints(*r);
  if (repeats.size() != x.size())
    fail("node ", node_label(node), ": repeats has ", repeats.size(), " entries for rank ",
         x.size());
  *out = x;
  for (size_t d = 0; d < x.size(); ++d) {
    if (repeats[d] < 0 || (x[d] != 0 && repeats[d] > kMaxTensorBytes / x[d]))
      fail("node ", node_label(node), ": repeats ", repeats[d], " is out of range");
    (*out)[d] = x[d] * repeats[d];
  }
  return true;
}

SpaceDepthSpec space_depth_spec(const Node& node, const Shape& x) {
  if (x.size() != 4) fail("node ", node_label(node), ": input has rank ", x.size(), ", not 4");
  if (!has_attr(node, "blocksize")) fail("node ", node_label(node), ": blocksize is missing");
  const int64_t b = attr_int(node, "blocksize", 0);
  if (b < 1 || b > (int64_t{1} << 20))
    fail("node ", node_label(node), ": blocksize ", b, " is out of range");
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  SpaceDepthSpec spec;
  if (node.op_type == "DepthToSpace") {
    if (c % (b * b) != 0)
      fail("node ", node_label(node), ": channels ", c, " are not a multiple of blocksize^2 ",
           b * b);
    const std::string mode = attr_string(node, "mode", "DCR");
    if (mode == "DCR") {
      spec.view = {n, b, b, c / (b * b), h, w};
      spec.perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      spec.view = {n, c / (b * b), b, b, h, w};
      spec.perm = {0, 1, 4, 2, 5, 3};
    } else {
      fail("node ", node_label(node), ": unknown mode '", mode, "' (DCR or CRD)");
    }
    spec.out = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      fail("node ", node_label(node), ": height ", h, " and width ", w,
           " are not multiples of blocksize ", b);
    spec.view = {n, c, h / b, b, w / b, b};
    spec.perm = {0, 3, 5, 1, 2, 4};
    spec.out = {n, c * b * b, h / b, w / b};
  }
  return spec;
}

namespace {

// The elements of `in` at flat indices `index`, as a tensor of `shape`.
TensorData pick(const Value& in, Shape shape, const std::vector<int64_t>& index) {
  const size_t size = dtype_size(in.dtype);
  TensorData t{in.dtype, std::move(shape), std::vector<uint8_t>(index.size() * size)};
  for (size_t k = 0; k < index.size(); ++k)
    std::memcpy(t.bytes.data() + k * size, in.data.data() + index[k] * size, size);
  return t;
}

TensorData int64_tensor(Shape shape, const std::vector<int64_t>& values) {
  return {DataType::kInt64, std::move(shape), write_ints(DataType::kInt64, values)};
}

bool eval_constant(const Args& a, std::vector<TensorData>* out) {
  const auto& attrs = a.node.attrs;
  if (attrs.size() != 1) return false;
  const auto& [name, attr] = *attrs.begin();
  if (name == "value" && attr.kind == Attribute::Kind::kTensor) {
    if (attr.tensor.dtype == DataType::kString) return false;
    out->push_back(attr.tensor);
  } else if (name == "value_float" && attr.kind == Attribute::Kind::kFloat) {
    out->push_back({DataType::kFloat32, {}, write_doubles(DataType::kFloat32, {attr.f})});
  } else if (name == "value_floats" && attr.kind == Attribute::Kind::kFloats) {
    std::vector<double> v(attr.floats.begin(), attr.floats.end());
    out->push_back({DataType::kFloat32,
                    {static_cast<int64_t>(v.size())},
                    write_doubles(DataType::kFloat32, v)});
  } else if (name == "value_int" && attr.kind == Attribute::Kind::kInt) {
    out->push_back(int64_tensor({}, {attr.i}));
  } else if (name == "value_ints" && attr.kind == Attribute::Kind::kInts) {
    out->push_back(int64_tensor({static_cast<int64_t>(attr.ints.size())}, attr.ints));
  } else {
    return false;  // sparse_value, value_string(s)
  }
  return true;
}

bool eval_constant_of_shape(const Args& a, std::vector<TensorData>* out) {
  const Shape shape = read_ints(*a.in[0]);
  TensorData fill{DataType::kFloat32, {1}, write_doubles(DataType::kFloat32, {0.0})};
  auto it = a.node.attrs.find("value");
  if (it != a.node.attrs.end()) {
    if (it->second.kind != Attribute::Kind::kTensor || shape_count(it->second.tensor.shape) != 1 ||
        dtype_size(it->second.tensor.dtype) == 0)
      return false;
    fill = it->second.tensor;
  }
  if (!fits(shape, fill.dtype)) return false;
  const size_t size = dtype_size(fill.dtype);
  TensorData t{fill.dtype, shape, std::vector<uint8_t>(shape_count(shape) * size)};
  for (size_t k = 0; k < t.bytes.size(); k += size)
    std::memcpy(&t.bytes[k], fill.bytes.data(), size);
  out->push_back(std::move(t));
  return true;
}

bool eval_shape(const Args& a, std::vector<TensorData>* out) {
  const Shape& s = a.in[0]->shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  // Opset 15 slices with start/end, clamped like Slice.
  int64_t start = attr_int(a.node, "start", 0), end = attr_int(a.node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  out->push_back(int64_tensor({static_cast<int64_t>(dims.size())}, dims));
  return true;
}

bool eval_size(const Args& a, std::vector<TensorData>* out) {
  out->push_back(int64_tensor({}, {shape_count(a.in[0]->shape)}));
  return true;
}

// Identity, and Dropout at inference (the mask is all true).
bool eval_identity(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  if (a.node.op_type == "Dropout" && a.in.size() > 2 && a.in[2] != nullptr) {
    const std::vector<int64_t> training = read_ints(*a.in[2]);
    if (training.empty() || training[0] != 0) return false;  // random: not a constant
  }
  out->push_back({x.dtype, x.shape, x.data});
  if (a.node.outputs.size() > 1)
    out->push_back({DataType::kBool, x.shape, std::vector<uint8_t>(shape_count(x.shape), 1)});
  return true;
}

bool eval_gather(const Args& a, std::vector<TensorData>* out) {
  const Value &data = *a.in[0], &indices = *a.in[1];
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) fail("node ", node_label(a.node), ": Gather on a scalar");
  const int64_t axis = normalize_axis(a.node, attr_int(a.node, "axis", 0), rank);
  const int64_t dim = data.shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= data.shape[i];
    if (i > axis) inner *= data.shape[i];
  }
  std::vector<int64_t> idx = read_ints(indices);
  for (int64_t& i : idx) {
    if (i < -dim || i >= dim)
      fail("node ", node_label(a.node), ": Gather index ", i, " is out of range for dim ", dim);
    if (i < 0) i += dim;
  }
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  std::vector<int64_t> index;
  index.reserve(outer * idx.size() * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx)
      for (int64_t k = 0; k < inner; ++k) index.push_back((o * dim + i) * inner + k);
  out->push_back(pick(data, std::move(shape), index));
  return true;
}

bool eval_reshape_like(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const std::string& op = a.node.op_type;
  Shape shape;
  if (op == "Reshape") {
    shape = reshape_shape(a.node, x.shape, read_ints(*a.in[1]), attr_int(a.node, "allowzero", 0));
  } else if (op == "Flatten") {
    shape = flatten_shape(a.node, x.shape, attr_int(a.node, "axis", 1));
  } else {
    std::vector<int64_t> axes;
    if (!squeeze_axes(a.g, a.node, &axes)) return false;
    shape = op == "Squeeze" ? squeeze_shape(a.node, x.shape, axes)
                            : unsqueeze_shape(a.node, x.shape, axes);
  }
  out->push_back({x.dtype, std::move(shape), x.data});
  return true;
}

bool eval_concat(const Args& a, std::vector<TensorData>* out) {
  const Value& first = *a.in[0];
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  const int64_t axis = normalize_axis(a.node, attr_int(a.node, "axis", 0), rank);
  Shape shape = first.shape;
  shape[axis] = 0;
  for (const Value* v : a.in) {
    if (v == nullptr || v->dtype != first.dtype || static_cast<int64_t>(v->shape.size()) != rank)
      fail("node ", node_label(a.node), ": Concat inputs differ in dtype or rank");
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && v->shape[i] != first.shape[i])
        fail("node ", node_label(a.node), ": shape mismatch: cannot concatenate ",
             shape_str(first.shape), " and ", shape_str(v->shape), " on axis ", axis);
    shape[axis] += v->shape[axis];
  }
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
  const size_t size = dtype_size(first.dtype);
  TensorData t{first.dtype, shape, {}};
  t.bytes.reserve(shape_count(shape) * size);
  for (int64_t o = 0; o < outer; ++o)
    for (const Value* v : a.in) {
      const size_t chunk = v->data.size() / static_cast<size_t>(outer);
      t.bytes.insert(t.bytes.end(), v->data.begin() + o * chunk, v->data.begin() + (o + 1) * chunk);
    }
  out->push_back(std::move(t));
  return true;
}

// The input's kernel dtype and rank are within what the kernels take (rank <= kMaxRank).
bool kernel_rank(const Shape& shape) { return shape.size() <= static_cast<size_t>(kernels::kMaxRank); }

}  // namespace

TensorData transpose_data(const TensorData& x, const Shape& view, const std::vector<int32_t>& perm) {
  const int32_t rank = static_cast<int32_t>(view.size());
  kernels::TransposeParams p;
  p.rank = rank;
  p.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  std::vector<int64_t> dense(rank, 1);
  for (int32_t d = rank - 2; d >= 0; --d) dense[d] = dense[d + 1] * view[d + 1];
  Shape shape(rank);
  for (int32_t d = 0; d < rank; ++d) {
    shape[d] = p.out_dims[d] = view[perm[d]];
    p.x_strides[d] = dense[perm[d]];
  }
  TensorData t{x.dtype, shape, std::vector<uint8_t>(x.bytes.size())};
  if (!t.bytes.empty()) kernels::cpu::transpose(p, x.bytes.data(), t.bytes.data());
  return t;
}

namespace {

TensorData run_slice(const TensorData& x, const SliceSpec& spec) {
  kernels::SliceParams p;
  p.rank = static_cast<int32_t>(x.shape.size());
  p.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  for (int32_t d = 0; d < p.rank; ++d) {
    p.x_dims[d] = x.shape[d];
    p.out_dims[d] = spec.out[d];
    p.starts[d] = spec.starts[d];
    p.steps[d] = spec.steps[d];
  }
  TensorData t{x.dtype, spec.out, std::vector<uint8_t>(shape_count(spec.out) * p.elem_bytes)};
  if (!t.bytes.empty()) kernels::cpu::slice(p, x.bytes.data(), t.bytes.data());
  return t;
}

TensorData data_of(const Value& v) { return {v.dtype, v.shape, v.data}; }

bool eval_transpose(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const std::vector<int32_t> perm = transpose_perm(a.node, static_cast<int64_t>(x.shape.size()));
  if (!kernel_rank(x.shape)) return false;
  out->push_back(transpose_data(data_of(x), x.shape, perm));
  return true;
}

bool eval_slice(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  SliceSpec spec;
  std::string why;
  if (!kernel_rank(x.shape) || !slice_spec(a.g, a.node, x.shape, &spec, &why)) return false;
  out->push_back(run_slice(data_of(x), spec));
  return true;
}

bool eval_split(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  SplitSpec split;
  std::string why;
  if (!kernel_rank(x.shape) || !split_spec(a.g, a.node, x.shape, &split, &why)) return false;
  SliceSpec spec;
  spec.starts.assign(x.shape.size(), 0);
  spec.steps.assign(x.shape.size(), 1);
  spec.out = x.shape;
  for (int64_t size : split.sizes) {
    spec.out[split.axis] = size;
    out->push_back(run_slice(data_of(x), spec));
    spec.starts[split.axis] += size;
  }
  return true;
}

bool eval_pad(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  PadSpec spec;
  std::string why;
  kernels::PadParams p;
  if (!kernel_rank(x.shape) || dtype_size(x.dtype) > sizeof(p.value) ||
      !pad_spec(a.g, a.node, x.shape, x.dtype, &spec, &why) || !fits(spec.out, x.dtype) ||
      !pad_value_bytes(spec.value, x.dtype, p.value))
    return false;
  p.mode = static_cast<kernels::PadMode>(spec.mode);
  p.rank = static_cast<int32_t>(x.shape.size());
  p.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  for (int32_t d = 0; d < p.rank; ++d) {
    p.x_dims[d] = x.shape[d];
    p.out_dims[d] = spec.out[d];
    p.pads_begin[d] = spec.begin[d];
  }
  TensorData t{x.dtype, spec.out, std::vector<uint8_t>(shape_count(spec.out) * p.elem_bytes)};
  if (!t.bytes.empty()) kernels::cpu::pad(p, x.data.data(), t.bytes.data());
  out->push_back(std::move(t));
  return true;
}

bool eval_tile(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  Shape shape;
  std::string why;
  if (!kernel_rank(x.shape) || !tile_shape(a.g, a.node, x.shape, &shape, &why) ||
      !fits(shape, x.dtype))
    return false;
  kernels::BroadcastParams p;
  p.rank = static_cast<int32_t>(x.shape.size());
  p.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  int64_t stride = 1;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    p.out_dims[d] = shape[d];
    p.x_dims[d] = x.shape[d];
    p.x_strides[d] = stride;
    stride *= x.shape[d];
  }
  TensorData t{x.dtype, shape, std::vector<uint8_t>(shape_count(shape) * p.elem_bytes)};
  if (!t.bytes.empty() && !x.data.empty()) kernels::cpu::broadcast(p, x.data.data(), t.bytes.data());
  out->push_back(std::move(t));
  return true;
}

bool eval_gather_elements(const Args& a, std::vector<TensorData>* out) {
  const Value &data = *a.in[0], &indices = *a.in[1];
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || indices.shape.size() != data.shape.size())
    fail("node ", node_label(a.node), ": GatherElements needs data and indices of one rank >= 1");
  if (!kernel_rank(data.shape)) return false;
  const int64_t axis = normalize_axis(a.node, attr_int(a.node, "axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      fail("node ", node_label(a.node), ": indices ", shape_str(indices.shape),
           " are larger than data ", shape_str(data.shape), " off the axis");
  const int64_t dim = data.shape[axis];
  std::vector<int64_t> idx = read_ints(indices);
  for (int64_t i : idx)
    if (i < -dim || i >= dim)
      fail("node ", node_label(a.node), ": GatherElements index ", i,
           " is out of range for dim ", dim);
  // The kernel reads int64 indices: the values just read, whatever the stored type.
  const std::vector<uint8_t> index_bytes = write_ints(DataType::kInt64, idx);
  kernels::GatherElementsParams p;
  p.rank = static_cast<int32_t>(rank);
  p.axis = static_cast<int32_t>(axis);
  p.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  p.index_dtype = kernels::DType::kInt64;
  for (int64_t d = 0; d < rank; ++d) {
    p.data_dims[d] = data.shape[d];
    p.out_dims[d] = indices.shape[d];
  }
  TensorData t{data.dtype, indices.shape,
               std::vector<uint8_t>(shape_count(indices.shape) * p.elem_bytes)};
  if (!t.bytes.empty())
    kernels::cpu::gather_elements(p, data.data.data(), index_bytes.data(), t.bytes.data());
  out->push_back(std::move(t));
  return true;
}

bool eval_space_depth(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const SpaceDepthSpec spec = space_depth_spec(a.node, x.shape);
  TensorData t = transpose_data(data_of(x), spec.view, spec.perm);
  t.shape = spec.out;
  out->push_back(std::move(t));
  return true;
}

bool eval_expand(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const Shape shape = broadcast_or_fail(a.node, x.shape, read_ints(*a.in[1]));
  if (!fits(shape, x.dtype)) return false;
  out->push_back(pick(x, shape, broadcast_index(x.shape, shape)));
  return true;
}

struct Rule {
  const char* op_type;
  Evaluator eval;
  int min_inputs;   // required inputs; the evaluator may read optional ones past these
  bool shape_only;  // reads only its first input's shape, not its data
};

// Sorted by op type (checked below), searched by binary search.
constexpr Rule kRules[] = {
    {"Abs", eval_unary, 1, false},
    {"Acos", eval_unary, 1, false},
    {"Acosh", eval_unary, 1, false},
    {"Add", eval_binary, 2, false},
    {"And", eval_elementwise, 2, false},
    {"Asin", eval_unary, 1, false},
    {"Asinh", eval_unary, 1, false},
    {"Atan", eval_unary, 1, false},
    {"Atanh", eval_unary, 1, false},
    {"Cast", eval_cast, 1, false},
    {"CastLike", eval_cast, 2, false},
    {"Ceil", eval_unary, 1, false},
    {"Concat", eval_concat, 1, false},
    {"Constant", eval_constant, 0, false},
    {"ConstantOfShape", eval_constant_of_shape, 1, false},
    {"Cos", eval_unary, 1, false},
    {"Cosh", eval_unary, 1, false},
    {"DepthToSpace", eval_space_depth, 1, false},
    {"Div", eval_binary, 2, false},
    {"Dropout", eval_identity, 1, false},
    {"Equal", eval_elementwise, 2, false},
    {"Erf", eval_unary, 1, false},
    {"Exp", eval_unary, 1, false},
    {"Expand", eval_expand, 2, false},
    {"Flatten", eval_reshape_like, 1, false},
    {"Floor", eval_unary, 1, false},
    {"Gather", eval_gather, 2, false},
    {"GatherElements", eval_gather_elements, 2, false},
    {"Greater", eval_elementwise, 2, false},
    {"GreaterOrEqual", eval_elementwise, 2, false},
    {"Identity", eval_identity, 1, false},
    {"IsInf", eval_unary, 1, false},
    {"IsNaN", eval_unary, 1, false},
    {"Less", eval_elementwise, 2, false},
    {"LessOrEqual", eval_elementwise, 2, false},
    {"Log", eval_unary, 1, false},
    {"Max", eval_binary, 1, false},
    {"Mean", eval_variadic, 1, false},
    {"Min", eval_binary, 1, false},
    {"Mish", eval_unary, 1, false},
    {"Mod", eval_elementwise, 2, false},
    {"Mul", eval_binary, 2, false},
    {"Neg", eval_unary, 1, false},
    {"Not", eval_unary, 1, false},
    {"Or", eval_elementwise, 2, false},
    {"Pad", eval_pad, 1, false},
    {"Pow", eval_binary, 2, false},
    {"Range", eval_range, 3, false},
    {"Reciprocal", eval_unary, 1, false},
    {"Relu", eval_unary, 1, false},
    {"Reshape", eval_reshape_like, 2, false},
    {"Round", eval_unary, 1, false},
    {"Shape", eval_shape, 1, true},
    {"Sigmoid", eval_unary, 1, false},
    {"Sign", eval_unary, 1, false},
    {"Sin", eval_unary, 1, false},
    {"Sinh", eval_unary, 1, false},
    {"Size", eval_size, 1, true},
    {"Slice", eval_slice, 1, false},
    {"Softplus", eval_unary, 1, false},
    {"Softsign", eval_unary, 1, false},
    {"SpaceToDepth", eval_space_depth, 1, false},
    {"Split", eval_split, 1, false},
    {"Sqrt", eval_unary, 1, false},
    {"Squeeze", eval_reshape_like, 1, false},
    {"Sub", eval_binary, 2, false},
    {"Sum", eval_variadic, 1, false},
    {"Tan", eval_unary, 1, false},
    {"Tanh", eval_unary, 1, false},
    {"Tile", eval_tile, 2, false},
    {"Transpose", eval_transpose, 1, false},
    {"Unsqueeze", eval_reshape_like, 1, false},
    {"Where", eval_where, 3, false},
    {"Xor", eval_elementwise, 2, false},
};

static_assert(sorted_by_op_type(kRules), "kRules must be sorted by op type");

const Rule* find_rule(const std::string& op_type) {
  auto it = std::lower_bound(std::begin(kRules), std::end(kRules), op_type,
                             [](const Rule& r, const std::string& op) { return op > r.op_type; });
  return it != std::end(kRules) && op_type == it->op_type ? it : nullptr;
}

}  // namespace
}  // namespace fold

bool can_fold_op(const std::string& op_type) { return fold::find_rule(op_type) != nullptr; }

bool fold_node(Graph& g, Node& node) {
  if (!node.domain.empty()) return false;
  const fold::Rule* rule = fold::find_rule(node.op_type);
  if (rule == nullptr) return false;
  fold::Args args{g, node, {}};
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] < 0) {
      args.in.push_back(nullptr);
      continue;
    }
    const Value& v = g.values[node.inputs[i]];
    const bool ready =
        rule->shape_only && i == 0 ? v.shape_known : v.is_constant && dtype_size(v.dtype) != 0;
    if (!ready) return false;
    args.in.push_back(&v);
  }
  for (int i = 0; i < rule->min_inputs; ++i)
    if (i >= static_cast<int>(args.in.size()) || args.in[i] == nullptr) return false;
  std::vector<TensorData> results;
  if (!rule->eval(args, &results)) return false;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0 && i >= results.size()) return false;  // an output we cannot make

  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    Value& out = g.values[node.outputs[i]];
    TensorData& r = results[i];
    if (out.shape_known && out.shape != r.shape)
      fail("node ", node_label(node), ": output '", out.name, "' evaluates to shape ",
           shape_str(r.shape), " but the model declares ", shape_str(out.shape));
    if (out.dtype != DataType::kUndefined && out.dtype != r.dtype)
      fail("node ", node_label(node), ": output '", out.name, "' evaluates to ",
           dtype_name(r.dtype), " but the model declares ", dtype_name(out.dtype));
    out.dtype = r.dtype;
    out.shape = std::move(r.shape);
    out.shape_known = true;
    out.is_constant = true;
    out.data = std::move(r.bytes);
    out.producer = -1;
  }
  node.dead = true;
  return true;
}

void remove_identities(Graph& g) {
  for (Node& node : g.nodes) {
    if (node.dead || !node.op.resolved || !node.op.removable) continue;
    const int x = node.inputs[0], y = node.outputs[0];
    Value &in = g.values[x], &out = g.values[y];
    if (!out.graph_output) {
      node.dead = true;
      g.replace_uses(y, x);
    } else if (in.producer >= 0 && !in.graph_output) {
      // The graph output keeps its name: the producer writes it directly.
      node.dead = true;
      Node& producer = g.nodes[in.producer];
      for (int& o : producer.outputs)
        if (o == x) o = y;
      g.replace_uses(x, y);
      out.producer = in.producer;
      in.producer = -1;
    }
    // else: a graph input or a constant that is also a graph output stays a Copy.
  }
  g.compact();
}

void eliminate_dead_nodes(Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Node& n : g.nodes)
    if (!n.dead)
      for (int v : n.inputs)
        if (v >= 0) ++uses[v];
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    if (n.dead) continue;
    bool needed = false;
    for (int v : n.outputs)
      needed = needed || (v >= 0 && (uses[v] > 0 || g.values[v].graph_output));
    if (needed) continue;
    n.dead = true;
    for (int v : n.inputs)
      if (v >= 0) --uses[v];
  }
  g.compact();
}

}  // namespace jetplan::converter
