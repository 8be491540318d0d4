// Constant folding: shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains)
// and weight preprocessing that exporters leave in the graph are evaluated at conversion, so
// the plan only holds steps on run-time data. Data movement ops here are dtype-agnostic byte
// moves; numeric ops are in fold_arith.cc.
#include <algorithm>
#include <cstring>
#include <string>

#include "converter/src/error.h"
#include "converter/src/fold_eval.h"
#include "converter/src/passes.h"
#include "converter/src/shape_ops.h"
#include "converter/src/table.h"

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

namespace {

// The elements of `in` at flat indices `index`, as a tensor of `shape`.
TensorData pick(const Value& in, Shape shape, const std::vector<int64_t>& index) {
  const size_t size = dtype_size(in.dtype);
  TensorData t{in.dtype, std::move(shape), std::vector<uint8_t>(index.size() * size)};
  for (size_t k = 0; k < index.size(); ++k)
    std::memcpy(t.bytes.data() + k * size, in.data.data() + index[k] * size, size);
  return t;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
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

bool eval_transpose(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> perm = attr_ints(a.node, "perm", {});
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != iota(rank)) fail("node ", node_label(a.node), ": perm is not a permutation");
  std::vector<int64_t> in_stride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * x.shape[i + 1];
  Shape shape(rank);
  std::vector<int64_t> stride(rank);  // input stride of each output dim
  for (int64_t i = 0; i < rank; ++i) {
    shape[i] = x.shape[perm[i]];
    stride[i] = in_stride[perm[i]];
  }
  std::vector<int64_t> index(shape_count(shape));
  std::vector<int64_t> counter(rank, 0);
  int64_t at = 0;
  for (int64_t& e : index) {
    e = at;
    for (int64_t i = rank - 1; i >= 0; --i) {
      at += stride[i];
      if (++counter[i] < shape[i]) break;
      at -= stride[i] * shape[i];
      counter[i] = 0;
    }
  }
  out->push_back(pick(x, std::move(shape), index));
  return true;
}

bool eval_slice(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (a.g.opset < 10) {
    starts = attr_ints(a.node, "starts", {});
    ends = attr_ints(a.node, "ends", {});
    axes = attr_ints(a.node, "axes", {});
  } else {
    if (a.in.size() < 3 || a.in[1] == nullptr || a.in[2] == nullptr) return false;
    starts = read_ints(*a.in[1]);
    ends = read_ints(*a.in[2]);
    if (a.in.size() > 3 && a.in[3]) axes = read_ints(*a.in[3]);
    if (a.in.size() > 4 && a.in[4]) steps = read_ints(*a.in[4]);
  }
  if (axes.empty()) axes = iota(static_cast<int64_t>(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    fail("node ", node_label(a.node), ": starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  Shape shape = x.shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t axis = normalize_axis(a.node, axes[k], rank);
    const int64_t dim = x.shape[axis];
    const int64_t st = steps[k];
    if (st == 0) fail("node ", node_label(a.node), ": Slice step 0");
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -dim ? -1 : s + dim;  // clamp before adding: INT64_MIN stays in range
    if (e < 0) e = e < -dim ? -1 : e + dim;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    const int64_t n = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    first[axis] = s;
    step[axis] = st;
    shape[axis] = std::max<int64_t>(n, 0);
  }
  std::vector<int64_t> in_stride(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) in_stride[i] = in_stride[i + 1] * x.shape[i + 1];
  std::vector<int64_t> index(shape_count(shape));
  std::vector<int64_t> counter(rank, 0);
  for (int64_t& e : index) {
    e = 0;
    for (int64_t i = 0; i < rank; ++i) e += (first[i] + counter[i] * step[i]) * in_stride[i];
    for (int64_t i = rank - 1; i >= 0; --i) {
      if (++counter[i] < shape[i]) break;
      counter[i] = 0;
    }
  }
  out->push_back(pick(x, std::move(shape), index));
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
    {"Add", eval_binary, 2, false},
    {"Cast", eval_cast, 1, false},
    {"Ceil", eval_unary, 1, false},
    {"Concat", eval_concat, 1, false},
    {"Constant", eval_constant, 0, false},
    {"ConstantOfShape", eval_constant_of_shape, 1, false},
    {"Div", eval_binary, 2, false},
    {"Dropout", eval_identity, 1, false},
    {"Exp", eval_unary, 1, false},
    {"Expand", eval_expand, 2, false},
    {"Flatten", eval_reshape_like, 1, false},
    {"Floor", eval_unary, 1, false},
    {"Gather", eval_gather, 2, false},
    {"Identity", eval_identity, 1, false},
    {"Log", eval_unary, 1, false},
    {"Max", eval_binary, 1, false},
    {"Min", eval_binary, 1, false},
    {"Mul", eval_binary, 2, false},
    {"Neg", eval_unary, 1, false},
    {"Pow", eval_binary, 2, false},
    {"Range", eval_range, 3, false},
    {"Reciprocal", eval_unary, 1, false},
    {"Relu", eval_unary, 1, false},
    {"Reshape", eval_reshape_like, 2, false},
    {"Shape", eval_shape, 1, true},
    {"Sigmoid", eval_unary, 1, false},
    {"Size", eval_size, 1, true},
    {"Slice", eval_slice, 1, false},
    {"Sqrt", eval_unary, 1, false},
    {"Squeeze", eval_reshape_like, 1, false},
    {"Sub", eval_binary, 2, false},
    {"Tanh", eval_unary, 1, false},
    {"Transpose", eval_transpose, 1, false},
    {"Unsqueeze", eval_reshape_like, 1, false},
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
