// The Where family: ONNX Where (bool condition, numpy broadcasting of all three inputs), and
// what runs as Wheres: Trilu (a constant mask), OneHot, Shrink, ThresholdedRelu; and EyeLike (a
// constant).
#include <cstring>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_where(Graph& g, Node& node) {
  const Value& cond = input(g, node, 0);
  const Value& x = input(g, node, 1);
  const Value& y = input(g, node, 2);
  if (cond.dtype != DataType::kBool)
    return cat("condition '", cond.name, "' is ", dtype_name(cond.dtype), ", not bool");
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  if (x.dtype != y.dtype)
    return cat("x and y differ in dtype (", dtype_name(x.dtype), " and ", dtype_name(y.dtype), ")");
  const Shape out = broadcast_or_fail(node, broadcast_or_fail(node, cond.shape, x.shape), y.shape);
  return resolve_as(g, node, fb::OpFamily::Where, x.dtype, out);
}

// The most elements of Trilu's [N, M] mask, a Bool constant of the plan (64 MiB).
constexpr int64_t kMaxTriluMask = int64_t{1} << 26;

// Trilu (opset 14): Where(mask, x, 0), with mask[i][j] = j - i >= k (upper) or j - i <= k
// (lower) a constant over x's last two dims, which broadcasts over the others. Exact for every
// dtype (the zeroed elements are chosen, not multiplied: a NaN or infinity there still gives 0);
// on a constant x it folds.
std::string decompose_trilu(Graph& g, const Node& node, std::vector<Node>* out) {
  // Copies: the constants added below may move the graph's values.
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const Shape shape = x.shape;
  const DataType dtype = x.dtype;
  if (shape.size() < 2) return cat("the input must have rank 2 or more (", shape_str(shape), ")");
  int64_t k = 0;
  if (has_input(node, 1)) {
    const Value& kv = input(g, node, 1);
    if (!kv.is_constant) return run_time_reason("k");
    if (kv.dtype != DataType::kInt64 || kv.data.size() != sizeof(k))
      return cat("k must be one int64 (it is ", dtype_name(kv.dtype), " ", shape_str(kv.shape), ")");
    std::memcpy(&k, kv.data.data(), sizeof(k));
  }
  const bool upper = attr_int(node, "upper", 1) != 0;
  const int64_t n = shape[shape.size() - 2], m = shape[shape.size() - 1];
  if (n < 0 || m < 0 || (n > 0 && m > kMaxTriluMask / n))
    return cat("its mask of the last two dims ", n, "x", m, " would exceed ", kMaxTriluMask,
               " elements");
  std::vector<uint8_t> mask(size_t(n * m));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) mask[size_t(i * m + j)] = upper ? j - i >= k : j - i <= k;
  OnnxNodes b(g, node, out);
  const int cond = b.constant("mask", DataType::kBool, {n, m}, std::move(mask));
  const int zero = b.constant("zero", dtype, {}, std::vector<uint8_t>(dtype_size(dtype), 0));
  b.add("Where", "kept", {cond, node.inputs[0], zero}, {}, node.outputs[0]);
  return "";
}

// ThresholdedRelu (opset 10): Where(x > alpha, x, 0).
std::string decompose_thresholded_relu(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  OnnxNodes b(g, node, out);
  const int x = node.inputs[0];
  const int above = b.add("Greater", "above", {x, b.scalar("alpha", attr_float(node, "alpha", 1.f))});
  b.add("Where", "kept", {above, x, b.scalar("zero", 0.f)}, {}, node.outputs[0]);
  return "";
}

// Shrink (opset 9) of float32: x + bias below -lambd, x - bias above lambd, 0 between.
std::string decompose_shrink(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const float lambd = attr_float(node, "lambd", 0.5f), bias = attr_float(node, "bias", 0.f);
  OnnxNodes b(g, node, out);
  const int x = node.inputs[0], bv = b.scalar("bias", bias);
  const int upper = b.add("Where", "upper", {b.add("Greater", "above", {x, b.scalar("lambd", lambd)}),
                                             b.add("Sub", "minus_bias", {x, bv}), b.scalar("zero", 0.f)});
  b.add("Where", "shrunk", {b.add("Less", "below", {x, b.scalar("neg_lambd", -lambd)}),
                            b.add("Add", "plus_bias", {x, bv}), upper},
        {}, node.outputs[0]);
  return "";
}

// OneHot (opsets 9 and 11) with a constant depth: Where(Equal(i, positions), on, off), i the
// index (a float one truncated to int64 first) made non-negative (i + depth below 0) and given
// a dim of 1 at `axis`, positions the constant 0 .. depth - 1 along it; an index outside
// [-depth, depth) matches nothing (all off). values [off, on]: constants or Gathers of the input.
std::string decompose_one_hot(Graph& g, const Node& node, std::vector<Node>* out) {
  const Value& idx = input(g, node, 0);
  const Value& depth_value = input(g, node, 1);
  const Value& values = input(g, node, 2);
  if (std::string r = plan_dtype_reason(values); !r.empty()) return r;
  const DataType values_dtype = values.dtype;
  const bool values_constant = values.is_constant;
  const std::vector<uint8_t> values_data = values.data;
  if (shape_count(values.shape) != 2)
    return cat("values must hold [off, on] (it is ", shape_str(values.shape), ")");
  DataType index_dtype = idx.dtype;
  const Shape shape = idx.shape;
  if (index_dtype != DataType::kInt32 && index_dtype != DataType::kInt64 &&
      index_dtype != DataType::kFloat32)
    return cat("indices of ", dtype_name(index_dtype), " (jetplan takes int32, int64 and float32)");
  if (!depth_value.is_constant) return run_time_reason("depth");
  if (shape_count(depth_value.shape) != 1) return "depth must hold one value";
  const std::vector<double> depth_read = read_doubles(depth_value);
  const auto depth = static_cast<int64_t>(depth_read[0]);
  if (depth < 1 || depth > (int64_t{1} << 24))
    fail("node ", node_label(node), ": depth ", depth_read[0], " (1 to 2^24)");
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = attr_int(node, "axis", -1);
  if (axis < -rank - 1 || axis > rank)
    fail("node ", node_label(node), ": axis ", axis, " out of range for an output of rank ", rank + 1);
  if (axis < 0) axis += rank + 1;
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  int i = node.inputs[0];
  if (index_dtype == DataType::kFloat32) {
    i = b.add("Cast", "index", {i}, {{"to", A::int_attr(int64_t(DataType::kInt64))}});
    index_dtype = DataType::kInt64;
  }
  auto index_constant = [&](const std::string& what, const Shape& s, std::vector<int64_t> v) {
    return b.constant(what, index_dtype, s, write_ints(index_dtype, v));
  };
  const int zero = index_constant("zero", {}, {0});
  const int wrapped = b.add("Where", "wrapped",
                            {b.add("Less", "negative", {i, zero}),
                             b.add("Add", "from_end", {i, index_constant("depth", {}, {depth})}), i});
  Shape with_axis = shape;
  with_axis.insert(with_axis.begin() + axis, 1);
  const int column = b.add("Reshape", "column", {wrapped, b.ints("column_shape", with_axis)});
  Shape positions_shape(size_t(rank + 1), 1);
  positions_shape[size_t(axis)] = depth;
  std::vector<int64_t> positions(static_cast<size_t>(depth));
  for (int64_t d = 0; d < depth; ++d) positions[size_t(d)] = d;
  const int hit = b.add("Equal", "hit", {column, index_constant("positions", positions_shape, positions)});
  int off = -1, on = -1;
  const size_t size = dtype_size(values_dtype);
  if (values_constant) {
    off = b.constant("off", values_dtype, {}, {values_data.begin(), values_data.begin() + long(size)});
    on = b.constant("on", values_dtype, {}, {values_data.begin() + long(size), values_data.end()});
  } else {
    const int flat = b.add("Reshape", "values_flat", {node.inputs[2], b.ints("pair", {2})});
    const auto pick = [&](const char* what, int64_t k) {
      return b.add("Gather", what,
                   {flat, b.constant(cat(what, "_index"), DataType::kInt64, {}, write_ints(DataType::kInt64, {k}))},
                   {{"axis", A::int_attr(0)}});
    };
    off = pick("off", 0);
    on = pick("on", 1);
  }
  b.add("Where", "one_hot", {hit, on, off}, {}, node.outputs[0]);
  return "";
}

// EyeLike (opset 9): a constant of x's [N, M] shape (x's values are not read), ones where
// column - row == k; the dtype attribute's type or x's (a Cast of the float32 pattern, folded).
std::string decompose_eye_like(Graph& g, const Node& node, std::vector<Node>* out) {
  const Value& x = input(g, node, 0);
  const Shape shape = x.shape;
  const auto dtype = static_cast<DataType>(attr_int(node, "dtype", int64_t(x.dtype)));
  if (shape.size() != 2) return cat("the input must be 2-D (it is ", shape_str(shape), ")");
  if (!is_plan_dtype(dtype))
    return cat("dtype ", dtype_name(dtype), ", which a plan cannot hold (", plan_dtype_list(), ")");
  const int64_t k = attr_int(node, "k", 0), n = shape[0], m = shape[1];
  if (n * m > kMaxTriluMask) return cat("its ", n, "x", m, " output would exceed ", kMaxTriluMask, " elements");
  std::vector<float> eye(size_t(n * m), 0.f);
  for (int64_t r = 0; r < n; ++r)
    if (r + k >= 0 && r + k < m) eye[size_t(r * m + r + k)] = 1.f;
  OnnxNodes b(g, node, out);
  b.add("Cast", "eye", {b.floats("pattern", shape, eye)},
        {{"to", OnnxNodes::int_attr(int64_t(dtype))}}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"OneHot", nullptr, kAnyPlanDtype,
     "depth constant; indices int32, int64 or float32 (truncated); values [off, on] of any plan "
     "dtype; runs as a Where of an Equal against the positions along axis",
     0, decompose_one_hot},
    {"EyeLike", nullptr, kAnyPlanDtype,
     "2-D; a constant of the input's shape (its values are not read)", 0, decompose_eye_like},
    {"Where", check_where, kAnyPlanDtype,
     "condition bool; X and Y of one dtype; numpy broadcasting of all three"},
    {"Shrink", nullptr, "float32", "runs as two Wheres of comparisons with lambd", 0,
     decompose_shrink},
    {"ThresholdedRelu", nullptr, "float32", "runs as Where(x > alpha, x, 0)", 0,
     decompose_thresholded_relu},
    {"Trilu", nullptr, kAnyPlanDtype,
     "k constant; runs as a Where of a constant [N, M] mask (at most 2^26 elements) over the "
     "last two dims; folds on a constant input",
     0, decompose_trilu},
};

}  // namespace

const FamilyRules where_rules = {serialize_empty<fb::WhereParams>, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
