// The Where family: ONNX Where (bool condition, numpy broadcasting of all three inputs), and
// Trilu, which runs as a Where of a constant mask.
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

constexpr OpRow kRows[] = {
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
