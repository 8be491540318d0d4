// The Elementwise family: comparisons, logic, Mod, and two-input arithmetic (Add, Sub, Mul, Div,
// Max, Min, Pow, and the variadic Sum, Mean) of every dtype. Their rows are here because this
// file decides the family: float32 arithmetic of two inputs is the Binary family's
// (check_binary); float64, integers (and integer or mixed-type Pow, in float64) are Elementwise
// steps on both backends; float16 and 8-bit integers compute in a wider dtype between Cast steps
// (exact for these ops).
#include <string>
#include <utility>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/arithmetic.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"
#include "kernels/kernels.h"

namespace jetplan::converter::ops {

namespace {

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
  // Opset 28 defines fmod=0 on floats too (floor), which jetplan has no kernel for; before, it
  // was left to integers. Its other changes spell out what C's fmod gives (kFMod).
  if (op == kernels::ElementwiseOp::kMod && (is_floating(dtype) || dtype == DataType::kFloat16)) {
    if (g.opset >= 28)
      return cat("Mod of ", dtype_name(dtype), " with fmod=0 (floor, opset 28) is not supported");
    fail("node ", node_label(node), ": Mod of ", dtype_name(dtype),
         " needs fmod=1 (ONNX leaves fmod=0 to integers)");
  }
  const DataType compute = fold::elementwise_compute_dtype(op, dtype);
  if (compute == DataType::kUndefined)
    return cat(node.op_type, " on ", dtype_name(dtype), " is not supported (",
               kernels::elementwise_is_logic(op) ? "bool only" : "no kernel for this dtype", ")");
  const Shape out = broadcast_or_fail(node, a.shape, b.shape);
  node.op.family = fb::OpFamily::Elementwise;
  node.op.elementwise = static_cast<fb::ElementwiseOp>(op);
  if (compute != dtype) {
    node.op.expand = Expansion::kPromote;
    node.op.compute_dtype = static_cast<int32_t>(compute);
  }
  const bool to_bool = kernels::elementwise_is_comparison(op) || kernels::elementwise_is_logic(op);
  set_output_typed(g, node, 0, to_bool ? DataType::kBool : dtype, out);
  return "";
}

// BitShift: direction LEFT or RIGHT (the rest is check_elementwise's).
std::string check_bit_shift(Graph& g, Node& node) {
  const std::string direction = attr_string(node, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    fail("node ", node_label(node), ": BitShift direction must be LEFT or RIGHT, not '",
         direction, "'");
  return check_elementwise(g, node);
}

// BitwiseNot (opset 18): x xor all ones, of x's integer dtype.
std::string decompose_bitwise_not(Graph& g, const Node& node, std::vector<Node>* out) {
  if (node.inputs.size() != 1 || !has_input(node, 0)) return "BitwiseNot takes 1 input";
  const DataType dtype = input(g, node, 0).dtype;
  const bool integer = dtype == DataType::kInt8 || dtype == DataType::kUInt8 ||
                       dtype == DataType::kInt16 || dtype == DataType::kUInt16 ||
                       dtype == DataType::kInt32 || dtype == DataType::kUInt32 ||
                       dtype == DataType::kInt64 || dtype == DataType::kUInt64;
  if (!integer) return cat("BitwiseNot on ", dtype_name(dtype), " is not supported (integers)");
  OnnxNodes b(g, node, out);
  const int ones = b.constant("all_ones", dtype, {}, std::vector<uint8_t>(dtype_size(dtype), 0xff));
  b.add("BitwiseXor", "not", {node.inputs[0], ones}, {}, node.outputs[0]);
  return "";
}

// Add, Sub, Mul, Div (two inputs) and Sum, Mean, Max, Min (one or more) of any dtype that has a
// way. Float32 with two inputs is the Binary family's check_binary (a fusable Binary step).
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
    return check_binary(g, node);
  Shape out = input(g, node, 0).shape;
  for (size_t i = 1; i < n; ++i) out = broadcast_or_fail(node, out, input(g, node, i).shape);
  if (n == 1) return resolve_as_copy(g, node, dtype, out);
  DataType compute;
  const ArithWay way = arith_way(type, dtype, &compute);
  if (way == ArithWay::kNone || (type == "Mean" && way != ArithWay::kBinary))
    return cat(type, " on ", dtype_name(dtype), " is not supported (",
               type == "Mean" ? "float32 and float16 only" : "no kernel for this dtype", ")");
  node.op.compute_dtype = static_cast<int32_t>(compute);
  if (n == 2 && type != "Mean") {
    // One step, with Cast steps around when the dtype is promoted.
    if (way == ArithWay::kBinary) {
      node.op.family = fb::OpFamily::Binary;
      node.op.binary = binary_op(type);
    } else {
      node.op.family = fb::OpFamily::Elementwise;
      node.op.elementwise = elementwise_arith_op(type);
    }
    if (compute != dtype) node.op.expand = Expansion::kPromote;
  } else {
    node.op.family = fb::OpFamily::Elementwise;  // placeholder: never fused
    node.op.expand = Expansion::kVariadic;
  }
  set_output_typed(g, node, 0, dtype, out);
  return "";
}

// Pow(x, y): float32 x and y are the core's Binary step. A float32 or float16 base with an
// exponent of another type (ONNX's T1: an integer `x ** 2` as exporters write RMSNorm, a float64)
// is that Binary step too, the exponent cast to float32 (a constant one folded) and a float16
// result cast back: so it runs on the GPU, at the base's precision. Integer bases run in float64
// as an Elementwise Pow, with Cast steps around: the output has x's dtype, a float to integer
// Cast truncating (exact for integer results below 2^53, the float64 mantissa).
std::string check_pow(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (Pow takes 2)");
  const Value& x = input(g, node, 0);
  const Value& y = input(g, node, 1);
  if (x.dtype == DataType::kFloat32 && y.dtype == DataType::kFloat32) return check_binary(g, node);
  for (const Value* v : {&x, &y}) {
    if (std::string r = plan_dtype_reason(*v); !r.empty()) return r;
    if (v->dtype == DataType::kBool)
      return cat("input '", v->name, "' is bool (Pow takes numbers)");
  }
  const Shape out = broadcast_or_fail(node, x.shape, y.shape);
  if (x.dtype == DataType::kFloat32 && y.is_constant) {  // a float32 exponent: fusable
    const TensorData as_float = fold::cast_data(TensorData{y.dtype, y.shape, y.data}, DataType::kFloat32);
    const Shape y_shape = y.shape;
    const std::string name = y.name + ":float32";
    node.inputs[1] = new_constant(g, name, DataType::kFloat32, y_shape, as_float.bytes);
    return check_binary(g, node);
  }
  if (x.dtype == DataType::kFloat32 || x.dtype == DataType::kFloat16) {
    node.op.binary = fb::BinaryOp::Pow;
    node.op.compute_dtype = static_cast<int32_t>(DataType::kFloat32);
    node.op.expand = Expansion::kPromote;
    const DataType base = x.dtype;
    return resolve_as(g, node, fb::OpFamily::Binary, base, out);
  }
  node.op.family = fb::OpFamily::Elementwise;
  node.op.elementwise = fb::ElementwiseOp::Pow;
  node.op.compute_dtype = static_cast<int32_t>(DataType::kFloat64);
  if (x.dtype != DataType::kFloat64 || y.dtype != DataType::kFloat64)
    node.op.expand = Expansion::kPromote;
  set_output_typed(g, node, 0, x.dtype, out);
  return "";
}

// Sum, Mean, Max, Min over N inputs: a left fold,
// in the compute dtype; Mean divides the sum by N.
void expand_variadic(StepWriter& w, Node node) {
  const std::string& op = node.op_type;
  const int y = node.outputs[0];
  const DataType dtype = w.value(y).dtype;
  const auto compute = static_cast<DataType>(node.op.compute_dtype);
  std::vector<int> xs;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    xs.push_back(w.cast(node.inputs[i], compute, node.name + ":in" + std::to_string(i)));
  const bool mean = op == "Mean";
  const bool direct = compute == dtype && !mean;  // the last step writes y itself
  int acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    const bool last = i + 1 == xs.size();
    const std::string name = node.name + (last && direct ? "" : ":" + std::to_string(i));
    acc = w.arith(op == "Sum" || mean ? "Add" : op, acc, xs[i], last && direct ? y : -1, name);
  }
  if (mean) {
    const int n = new_constant(w.graph(), node.name + ":count", compute, {},
                               write_doubles(compute, {static_cast<double>(xs.size())}));
    acc = w.arith("Div", acc, n, compute == dtype ? y : -1,
                  compute == dtype ? node.name : node.name + ":mean");
  }
  if (compute != dtype) w.add(StepWriter::step(node.name + ":out", fb::OpFamily::Cast, {acc}, y));
}

// Promoted arithmetic (steps.h) and the variadic Sum, Mean, Max, Min become several steps.
bool expand_elementwise(Graph& g, Node& node, std::vector<Node>* out) {
  if (node.op.expand == Expansion::kPromote) return expand_promoted(g, node, out);
  if (node.op.expand != Expansion::kVariadic) return false;
  node.op.expand = Expansion::kNone;
  StepWriter w(g, out);
  expand_variadic(w, std::move(node));
  return true;
}

constexpr const char* kArith =
    "float32, float16 (in float32), float64, int8, uint8 (in int32), int32, int64, int16, "
    "uint16, uint32, uint64";
constexpr const char* kArithNotes =
    "2 inputs, numpy broadcasting; float32 is a Binary step, fused into the preceding Conv/Gemm "
    "as bias or residual (Add, Sub) where it can be; integers wrap, x / 0 is 0";
constexpr const char* kVariadicNotes = "1 or more inputs, numpy broadcasting; NaN propagates";
constexpr const char* kCompare = "any plan dtype but bfloat16 -> bool";
constexpr const char* kCompareNotes = "2 inputs of one dtype, numpy broadcasting";
constexpr const char* kLogic = "bool";
constexpr const char* kBitwise =
    "int8, uint8 (in int32), int16, uint16, int32, uint32, int64, uint64";
constexpr const char* kBitwiseNotes = "2 inputs of one dtype, numpy broadcasting";

constexpr OpRow kRows[] = {
    {"Add", check_arith, kArith, kArithNotes},
    {"And", check_elementwise, kLogic, kCompareNotes},
    {"BitShift", check_bit_shift, kBitwise,
     "direction LEFT or RIGHT; signed types (opset 28): arithmetic right shift; a shift < 0 or "
     ">= the width gives 0 (-1 shifting a negative value right)",
     28},
    {"BitwiseAnd", check_elementwise, kBitwise, kBitwiseNotes, 18},
    {"BitwiseNot", nullptr, kBitwise, "runs as BitwiseXor with all ones", 18,
     decompose_bitwise_not},
    {"BitwiseOr", check_elementwise, kBitwise, kBitwiseNotes, 18},
    {"BitwiseXor", check_elementwise, kBitwise, kBitwiseNotes, 18},
    {"Div", check_arith, kArith, kArithNotes},
    {"Equal", check_elementwise, kCompare, kCompareNotes},
    {"Greater", check_elementwise, kCompare, kCompareNotes},
    {"GreaterOrEqual", check_elementwise, kCompare, kCompareNotes},
    {"Less", check_elementwise, kCompare, kCompareNotes},
    {"LessOrEqual", check_elementwise, kCompare, kCompareNotes},
    {"Max", check_arith, kArith, kVariadicNotes},
    {"Mean", check_arith, "float32, float16 (in float32)",
     "1 or more inputs, numpy broadcasting"},
    {"Min", check_arith, kArith, kVariadicNotes},
    {"Mod", check_elementwise, "int8, uint8 (in int32), int32, int64, int16, uint16, uint32, "
     "uint64; float32, float16, float64 with fmod=1",
     "2 inputs of one dtype, numpy broadcasting; x mod 0 is 0 for integers",
     28},
    {"Mul", check_arith, kArith, kArithNotes},
    {"Or", check_elementwise, kLogic, kCompareNotes},
    {"Pow", check_pow, "float32; x and y of float32, float16, float64, int8, uint8, int16, uint16, int32, "
     "uint32, int64, uint64 (in float64)",
     "2 inputs, numpy broadcasting; the output has x's dtype (float to integer truncates, "
     "exact while |result| < 2^53)"},
    {"Sub", check_arith, kArith, kArithNotes},
    {"Sum", check_arith, kArith, "1 or more inputs, numpy broadcasting: a chain of Adds"},
    {"Xor", check_elementwise, kLogic, kCompareNotes},
};

StepParamsOffset serialize_elementwise(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateElementwiseParams(fbb, s.op.elementwise));
}

}  // namespace

const FamilyRules elementwise_rules = {serialize_elementwise, expand_elementwise, rows_of(kRows)};

}  // namespace jetplan::converter::ops
