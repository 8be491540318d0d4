// Check functions of the tensor op families and their op table; expand_tensor, which turns the
// nodes that need several steps into those steps at legalize, is in
// support_group_tensor_expand.cc; Einsum's check is in support_group_tensor_einsum.cc.
//
// Dtypes: data movement (Transpose, Slice, Split, Gather, GatherElements, Pad, Expand, Tile,
// DepthToSpace, SpaceToDepth, Where, Cast) takes every plan dtype. Math runs where a kernel has
// the dtype (kernels/params_tensor.h, unary_supported / elementwise_supported); float16 computes
// in float32 and int8/uint8 in int32, with Cast steps around (exact for these ops: float32 holds
// every float16 result before its one rounding, and integer results wrap back to 8 bits as they
// would have). Float32 arithmetic is the core Binary family; float64 arithmetic (and integer or
// mixed-type Pow, in float64) is the Elementwise family's, on the CPU backend only, as is all
// arithmetic of int16, uint16, uint32 and uint64 (support.cc names the ops that take those).
#include <algorithm>
#include <string>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/support_group_tensor.h"
#include "converter/src/support_groups.h"
#include "converter/src/support_ops.h"
#include "converter/src/table.h"

namespace jetplan::converter {

namespace tensor {

ArithWay arith_way(const std::string&, DataType dtype, DataType* compute) {
  *compute = dtype;
  switch (dtype) {
    case DataType::kFloat32: return ArithWay::kBinary;
    case DataType::kFloat16: *compute = DataType::kFloat32; return ArithWay::kBinary;
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64:
    case DataType::kFloat64: return ArithWay::kElementwise;
    case DataType::kInt8:
    case DataType::kUInt8: *compute = DataType::kInt32; return ArithWay::kElementwise;
    default: return ArithWay::kNone;
  }
}

fb::BinaryOp binary_op(const std::string& op) {
  if (op == "Sub") return fb::BinaryOp::Sub;
  if (op == "Mul") return fb::BinaryOp::Mul;
  if (op == "Div") return fb::BinaryOp::Div;
  if (op == "Max") return fb::BinaryOp::Max;
  if (op == "Min") return fb::BinaryOp::Min;
  return fb::BinaryOp::Add;  // Add, Sum, Mean
}

fb::ElementwiseOp elementwise_arith_op(const std::string& op) {
  if (op == "Sub") return fb::ElementwiseOp::Sub;
  if (op == "Mul") return fb::ElementwiseOp::Mul;
  if (op == "Div") return fb::ElementwiseOp::Div;
  if (op == "Max") return fb::ElementwiseOp::Max;
  if (op == "Min") return fb::ElementwiseOp::Min;
  return fb::ElementwiseOp::Add;
}

}  // namespace tensor

namespace {

using tensor::ArithWay;
using tensor::arith_way;
using tensor::binary_op;
using tensor::elementwise_arith_op;

using support::has_input;
using support::input;
using support::set_output_typed;

// ---- shared pieces ----

std::string plan_dtype_reason(const Value& v) {
  if (is_plan_dtype(v.dtype)) return "";
  return cat("input '", v.name, "' is ", dtype_name(v.dtype), ", which a plan cannot hold (",
             plan_dtype_list(), ")");
}

// A node that moves nothing (identity Transpose, full Slice, Cast to the same type, ...):
// consumers read its input (remove_identities), or a Copy where both must stay.
std::string resolve_as_copy(Graph& g, Node& node, DataType dtype, const Shape& shape) {
  node.op.family = fb::OpFamily::Copy;
  node.op.removable = true;
  node.inputs.resize(1);
  set_output_typed(g, node, 0, dtype, shape);
  return "";
}

std::string same_dtype_reason(const Graph& g, const Node& node) {
  DataType first = DataType::kUndefined;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!has_input(node, i)) continue;
    const Value& v = g.values[node.inputs[i]];
    if (std::string r = plan_dtype_reason(v); !r.empty()) return r;
    if (first == DataType::kUndefined) first = v.dtype;
    if (v.dtype != first)
      return cat("inputs differ in dtype (", dtype_name(first), " and ", dtype_name(v.dtype), ")");
  }
  return "";
}

// ---- data movement ----

std::string check_transpose(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  const std::vector<int32_t> perm = fold::transpose_perm(node, static_cast<int64_t>(xs.size()));
  Shape out(xs.size());
  bool identity = true;
  for (size_t d = 0; d < xs.size(); ++d) {
    out[d] = xs[perm[d]];
    identity = identity && perm[d] == static_cast<int32_t>(d);
  }
  if (identity) return resolve_as_copy(g, node, dtype, out);
  node.op.family = fb::OpFamily::Transpose;
  node.op.tensor.perm = perm;
  set_output_typed(g, node, 0, dtype, out);
  return "";
}

std::string check_slice(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  fold::SliceSpec spec;
  std::string why;
  if (!fold::slice_spec(g, node, xs, &spec, &why)) return why;
  bool whole = spec.out == xs;
  for (int64_t s : spec.steps) whole = whole && s == 1;
  if (whole) return resolve_as_copy(g, node, dtype, xs);
  node.op.family = fb::OpFamily::Slice;
  node.op.tensor.starts = spec.starts;
  node.op.tensor.steps = spec.steps;
  node.inputs.resize(1);
  set_output_typed(g, node, 0, dtype, spec.out);
  return "";
}

std::string check_split(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  fold::SplitSpec spec;
  std::string why;
  if (!fold::split_spec(g, node, xs, &spec, &why)) return why;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < spec.sizes.size(); ++i) {
    Shape s = xs;
    s[spec.axis] = spec.sizes[i];
    shapes.push_back(s);
  }
  node.inputs.resize(1);
  if (shapes.size() == 1) return resolve_as_copy(g, node, dtype, xs);
  node.op.family = fb::OpFamily::Slice;
  node.op.tensor.expand = TensorExpand::kSplit;
  node.op.tensor.axis = static_cast<int32_t>(spec.axis);
  node.op.tensor.split = spec.sizes;
  for (size_t i = 0; i < shapes.size(); ++i)
    if (node.outputs[i] >= 0) set_output_typed(g, node, i, dtype, shapes[i]);
  return "";
}

std::string index_dtype_reason(const Value& indices) {
  if (indices.dtype == DataType::kInt32 || indices.dtype == DataType::kInt64) return "";
  return cat("indices '", indices.name, "' are ", dtype_name(indices.dtype),
             " (jetplan gathers with int32 or int64 indices)");
}

// Constant indices are checked now: out of range, the kernel would write zeros.
void check_constant_indices(const Node& node, const Value& indices, int64_t dim) {
  if (!indices.is_constant) return;
  for (int64_t i : read_ints(indices))
    if (i < -dim || i >= dim)
      fail("node ", node_label(node), ": index ", i, " is out of range for dim ", dim);
}

std::string check_gather(Graph& g, Node& node) {
  const Value& data = input(g, node, 0);
  const Value& indices = input(g, node, 1);
  if (std::string r = plan_dtype_reason(data); !r.empty()) return r;
  if (std::string r = index_dtype_reason(indices); !r.empty()) return r;
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) fail("node ", node_label(node), ": Gather on a scalar");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  check_constant_indices(node, indices, data.shape[axis]);
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  node.op.family = fb::OpFamily::Gather;
  node.op.tensor.axis = static_cast<int32_t>(axis);
  set_output_typed(g, node, 0, data.dtype, out);
  return "";
}

std::string check_gather_elements(Graph& g, Node& node) {
  const Value& data = input(g, node, 0);
  const Value& indices = input(g, node, 1);
  if (std::string r = plan_dtype_reason(data); !r.empty()) return r;
  if (std::string r = index_dtype_reason(indices); !r.empty()) return r;
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || indices.shape.size() != data.shape.size())
    fail("node ", node_label(node), ": data ", shape_str(data.shape), " and indices ",
         shape_str(indices.shape), " need one rank >= 1");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      fail("node ", node_label(node), ": indices ", shape_str(indices.shape),
           " are larger than data ", shape_str(data.shape), " off the axis");
  check_constant_indices(node, indices, data.shape[axis]);
  node.op.family = fb::OpFamily::GatherElements;
  node.op.tensor.axis = static_cast<int32_t>(axis);
  set_output_typed(g, node, 0, data.dtype, indices.shape);
  return "";
}

std::string check_pad(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  fold::PadSpec spec;
  std::string why;
  if (!fold::pad_spec(g, node, xs, dtype, &spec, &why)) return why;
  bool none = spec.out == xs;
  for (int64_t b : spec.begin) none = none && b == 0;
  if (none) return resolve_as_copy(g, node, dtype, xs);
  node.op.family = fb::OpFamily::Pad;
  node.op.tensor.pad_mode = spec.mode;
  node.op.tensor.pads_begin = spec.begin;
  node.op.tensor.pad_value = spec.value;
  node.inputs.resize(1);
  set_output_typed(g, node, 0, dtype, spec.out);
  return "";
}

std::string check_expand(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const Value& shape = input(g, node, 1);
  if (!shape.is_constant)
    return cat("its shape input '", shape.name,
               "' is computed at run time (jetplan needs it constant)");
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  const Shape out = broadcast_or_fail(node, xs, read_ints(shape));
  if (out == xs) return resolve_as_copy(g, node, dtype, xs);
  node.op.family = fb::OpFamily::Broadcast;
  node.op.tensor.tile = false;
  node.inputs.resize(1);
  set_output_typed(g, node, 0, dtype, out);
  return "";
}

std::string check_tile(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  Shape out;
  std::string why;
  if (!fold::tile_shape(g, node, xs, &out, &why)) return why;
  if (out == xs) return resolve_as_copy(g, node, dtype, xs);
  node.op.family = fb::OpFamily::Broadcast;
  node.op.tensor.tile = true;
  node.inputs.resize(1);
  set_output_typed(g, node, 0, dtype, out);
  return "";
}

std::string check_space_depth(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const fold::SpaceDepthSpec spec = fold::space_depth_spec(node, x.shape);
  if (spec.out == x.shape) return resolve_as_copy(g, node, dtype, spec.out);  // blocksize 1
  node.op.family = fb::OpFamily::Transpose;
  node.op.tensor.expand = TensorExpand::kSpaceDepth;
  node.op.tensor.view = spec.view;
  node.op.tensor.perm = spec.perm;
  set_output_typed(g, node, 0, dtype, spec.out);
  return "";
}

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
  node.op.family = fb::OpFamily::Where;
  set_output_typed(g, node, 0, x.dtype, out);
  return "";
}

std::string check_cast(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType from = x.dtype;
  const Shape xs = x.shape;
  DataType to;
  if (node.op_type == "CastLike") {
    to = input(g, node, 1).dtype;
  } else {
    if (!has_attr(node, "to")) fail("node ", node_label(node), ": the 'to' attribute is missing");
    to = static_cast<DataType>(attr_int(node, "to", 0));
  }
  if (!is_plan_dtype(to))
    return cat("cast to ", dtype_name(to), " is not supported (plans hold ", plan_dtype_list(),
               ")");
  if (to == from) return resolve_as_copy(g, node, from, xs);
  node.op.family = fb::OpFamily::Cast;
  node.inputs.resize(1);
  set_output_typed(g, node, 0, to, xs);
  return "";
}

// ---- math ----

std::string check_unary(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (std::string r = plan_dtype_reason(x); !r.empty()) return r;
  const DataType dtype = x.dtype;
  const Shape xs = x.shape;
  if (node.op_type == "Gelu" && attr_string(node, "approximate", "none") == "none") {
    // The erf form is an activation of the core family (float32).
    if (dtype != DataType::kFloat32)
      return cat("Gelu on ", dtype_name(dtype), " is not supported (float32 only)");
    node.op.family = fb::OpFamily::Activation;
    node.op.act.kind = fb::ActivationKind::Gelu;
    set_output_typed(g, node, 0, dtype, xs);
    return "";
  }
  kernels::UnaryOp op;
  if (!fold::unary_op_of(node, &op)) {
    if (node.op_type == "Gelu")
      fail("node ", node_label(node), ": unknown approximate '",
           attr_string(node, "approximate", ""), "' (none or tanh)");
    return "detect_positive and detect_negative are both 0 (the output is all false)";
  }
  const DataType compute = fold::unary_compute_dtype(op, dtype);
  if (compute == DataType::kUndefined) {
    if (op == kernels::UnaryOp::kNot) return cat("Not on ", dtype_name(dtype), " (bool only)");
    return cat(node.op_type, " on ", dtype_name(dtype),
               " is not supported (jetplan computes it in float32 or float16",
               op == kernels::UnaryOp::kAbs || op == kernels::UnaryOp::kNeg ||
                       op == kernels::UnaryOp::kSign
                   ? ", and integers of 8, 32 and 64 bits)"
                   : ")");
  }
  node.op.family = fb::OpFamily::Unary;
  node.op.tensor.unary = static_cast<fb::UnaryOp>(op);
  if (compute != dtype) {
    node.op.tensor.expand = TensorExpand::kPromote;
    node.op.tensor.compute_dtype = static_cast<int32_t>(compute);
  }
  node.inputs.resize(1);
  set_output_typed(g, node, 0, kernels::unary_is_predicate(op) ? DataType::kBool : dtype, xs);
  return "";
}

// Comparisons, logic and Mod.
std::string check_elementwise(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (", node.op_type, " takes 2)");
  if (std::string r = same_dtype_reason(g, node); !r.empty()) return r;
  const Value& a = input(g, node, 0);
  const Value& b = input(g, node, 1);
  const DataType dtype = a.dtype;
  kernels::ElementwiseOp op;
  fold::elementwise_op_of(node, &op);
  if (op == kernels::ElementwiseOp::kMod && (is_floating(dtype) || dtype == DataType::kFloat16))
    fail("node ", node_label(node), ": Mod of ", dtype_name(dtype),
         " needs fmod=1 (ONNX leaves fmod=0 to integers)");
  const DataType compute = fold::elementwise_compute_dtype(op, dtype);
  if (compute == DataType::kUndefined)
    return cat(node.op_type, " on ", dtype_name(dtype), " is not supported (",
               kernels::elementwise_is_logic(op) ? "bool only" : "no kernel for this dtype", ")");
  const Shape out = broadcast_or_fail(node, a.shape, b.shape);
  node.op.family = fb::OpFamily::Elementwise;
  node.op.tensor.elementwise = static_cast<fb::ElementwiseOp>(op);
  if (compute != dtype) {
    node.op.tensor.expand = TensorExpand::kPromote;
    node.op.tensor.compute_dtype = static_cast<int32_t>(compute);
  }
  const bool to_bool = kernels::elementwise_is_comparison(op) || kernels::elementwise_is_logic(op);
  set_output_typed(g, node, 0, to_bool ? DataType::kBool : dtype, out);
  return "";
}

// Add, Sub, Mul, Div (two inputs) and Sum, Mean, Max, Min (one or more) of any dtype that has a
// way. Float32 with two inputs is the core's check_binary (fusable Binary step).
std::string check_arith(Graph& g, Node& node) {
  const std::string& type = node.op_type;
  const bool variadic = type == "Sum" || type == "Mean" || type == "Max" || type == "Min";
  const size_t n = node.inputs.size();
  for (size_t i = 0; i < n; ++i)
    if (!has_input(node, i)) return cat("input ", i, " is omitted");
  if (n < 1 || (!variadic && n != 2))
    return cat(n, " inputs (", type, " takes ", variadic ? "1 or more" : "2", ")");
  if (std::string r = same_dtype_reason(g, node); !r.empty()) return r;
  const DataType dtype = input(g, node, 0).dtype;
  if (n == 2 && dtype == DataType::kFloat32 && type != "Sum" && type != "Mean")
    return support::check_binary(g, node);
  Shape out = input(g, node, 0).shape;
  for (size_t i = 1; i < n; ++i) out = broadcast_or_fail(node, out, input(g, node, i).shape);
  if (n == 1) return resolve_as_copy(g, node, dtype, out);
  DataType compute;
  const ArithWay way = arith_way(type, dtype, &compute);
  if (way == ArithWay::kNone || (type == "Mean" && way != ArithWay::kBinary))
    return cat(type, " on ", dtype_name(dtype), " is not supported (",
               type == "Mean" ? "float32 and float16 only" : "no kernel for this dtype", ")");
  node.op.tensor.compute_dtype = static_cast<int32_t>(compute);
  if (n == 2 && type != "Mean") {
    // One step, with Cast steps around when the dtype is promoted.
    if (way == ArithWay::kBinary) {
      node.op.family = fb::OpFamily::Binary;
      node.op.binary = binary_op(type);
    } else {
      node.op.family = fb::OpFamily::Elementwise;
      node.op.tensor.elementwise = elementwise_arith_op(type);
    }
    if (compute != dtype) node.op.tensor.expand = TensorExpand::kPromote;
  } else {
    node.op.family = fb::OpFamily::Elementwise;  // placeholder: never fused
    node.op.tensor.expand = TensorExpand::kVariadic;
  }
  set_output_typed(g, node, 0, dtype, out);
  return "";
}

// Pow(x, y): float32 x and y are the core's Binary step. Other numeric types (the exponent may
// differ from the base, ONNX's T1) run in float64 as an Elementwise Pow, with Cast steps around:
// the output has x's dtype, a float to integer Cast truncating (exact for integer results below
// 2^53, the float64 mantissa).
std::string check_pow(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (Pow takes 2)");
  const Value& x = input(g, node, 0);
  const Value& y = input(g, node, 1);
  if (x.dtype == DataType::kFloat32 && y.dtype == DataType::kFloat32)
    return support::check_binary(g, node);
  for (const Value* v : {&x, &y}) {
    if (std::string r = plan_dtype_reason(*v); !r.empty()) return r;
    if (v->dtype == DataType::kBool)
      return cat("input '", v->name, "' is bool (Pow takes numbers)");
  }
  const Shape out = broadcast_or_fail(node, x.shape, y.shape);
  node.op.family = fb::OpFamily::Elementwise;
  node.op.tensor.elementwise = fb::ElementwiseOp::Pow;
  node.op.tensor.compute_dtype = static_cast<int32_t>(DataType::kFloat64);
  if (x.dtype != DataType::kFloat64 || y.dtype != DataType::kFloat64)
    node.op.tensor.expand = TensorExpand::kPromote;
  set_output_typed(g, node, 0, x.dtype, out);
  return "";
}

struct OpCheck {
  const char* op_type;
  CheckFn check;
};

// Sorted by op type.
constexpr OpCheck kOps[] = {
    {"Abs", check_unary},
    {"Acos", check_unary},
    {"Acosh", check_unary},
    {"Add", check_arith},
    {"And", check_elementwise},
    {"Asin", check_unary},
    {"Asinh", check_unary},
    {"Atan", check_unary},
    {"Atanh", check_unary},
    {"Cast", check_cast},
    {"CastLike", check_cast},
    {"Ceil", check_unary},
    {"Cos", check_unary},
    {"Cosh", check_unary},
    {"DepthToSpace", check_space_depth},
    {"Div", check_arith},
    {"Einsum", tensor::check_einsum},
    {"Equal", check_elementwise},
    {"Erf", check_unary},
    {"Exp", check_unary},
    {"Expand", check_expand},
    {"Floor", check_unary},
    {"Gather", check_gather},
    {"GatherElements", check_gather_elements},
    {"Gelu", check_unary},
    {"Greater", check_elementwise},
    {"GreaterOrEqual", check_elementwise},
    {"IsInf", check_unary},
    {"IsNaN", check_unary},
    {"Less", check_elementwise},
    {"LessOrEqual", check_elementwise},
    {"Log", check_unary},
    {"Max", check_arith},
    {"Mean", check_arith},
    {"Min", check_arith},
    {"Mish", check_unary},
    {"Mod", check_elementwise},
    {"Mul", check_arith},
    {"Neg", check_unary},
    {"Not", check_unary},
    {"Or", check_elementwise},
    {"Pad", check_pad},
    {"Pow", check_pow},
    {"Reciprocal", check_unary},
    {"Round", check_unary},
    {"Sign", check_unary},
    {"Sin", check_unary},
    {"Sinh", check_unary},
    {"Slice", check_slice},
    {"Softplus", check_unary},
    {"Softsign", check_unary},
    {"SpaceToDepth", check_space_depth},
    {"Split", check_split},
    {"Sqrt", check_unary},
    {"Sub", check_arith},
    {"Sum", check_arith},
    {"Tan", check_unary},
    {"Tile", check_tile},
    {"Transpose", check_transpose},
    {"Where", check_where},
    {"Xor", check_elementwise},
};
static_assert(sorted_by_op_type(kOps), "kOps must be sorted by op type");

}  // namespace

namespace tensor {

std::string check_transpose_of(Graph& g, Node& node) { return check_transpose(g, node); }
std::string same_dtype_of(const Graph& g, const Node& node) { return same_dtype_reason(g, node); }

}  // namespace tensor

CheckFn find_check_tensor(const std::string& op_type) {
  auto it =
      std::lower_bound(std::begin(kOps), std::end(kOps), op_type,
                       [](const OpCheck& e, const std::string& op) { return op > e.op_type; });
  return it != std::end(kOps) && op_type == it->op_type ? it->check : nullptr;
}

}  // namespace jetplan::converter
