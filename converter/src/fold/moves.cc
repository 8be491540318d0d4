// Constant folding of the data movement and shape ops (the evaluators kRules in
// fold_constants.cc names): Constant, ConstantOfShape, Shape, Size, Identity, Gather, the
// reshapes, Concat, Transpose, Slice, Split, Pad, Tile, GatherElements, DepthToSpace and
// SpaceToDepth, Expand. Dtype-agnostic byte moves, through the CPU reference kernels where one
// exists.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/passes/passes.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ir/sorted_names.h"
#include "converter/src/ops/scatter.h"
#include "kernels/cpu/half.h"
#include "kernels/kernels.h"

namespace jetplan::converter::fold {

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

// The input's kernel dtype and rank are within what the kernels take (rank <= kMaxRank).
bool kernel_rank(const Shape& shape) { return shape.size() <= static_cast<size_t>(kernels::kMaxRank); }

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

}  // namespace

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
  for (const SliceSpec& spec : split_slices(x.shape, split))
    out->push_back(run_slice(data_of(x), spec));
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

// ScatterElements, Scatter and ScatterND through the CPU twin (read as the op check reads them:
// ops::scatter_params), the indices rewritten as int64.
bool eval_scatter(const Args& a, std::vector<TensorData>* out) {
  const Value &data = *a.in[0], &indices = *a.in[1], &updates = *a.in[2];
  if ((indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) ||
      updates.dtype != data.dtype || !kernel_rank(data.shape))
    return false;  // left to the op check, which says why
  kernels::ScatterParams p = ops::scatter_params(a.node, a.node.op_type == "ScatterND", data,
                                                 indices, updates);
  const std::vector<uint8_t> index_bytes = write_ints(DataType::kInt64, read_ints(indices));
  p.index_dtype = kernels::DType::kInt64;
  TensorData t{data.dtype, data.shape, data.data};
  if (!t.bytes.empty())
    kernels::cpu::scatter(p, t.bytes.data(), index_bytes.data(), updates.data.data(), t.bytes.data());
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

}  // namespace jetplan::converter::fold
