// The CumSum family: ONNX CumSum (opsets 11 and 14; 14 adds float16 and bfloat16) and CumProd
// (opset 26: running products, the same inputs and attributes), the axis a constant input.
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

bool takes(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kFloat64 ||
         t == DataType::kInt32 || t == DataType::kInt64;
}

// CumSum and CumProd alike; `op` names the node's op in messages.
std::string check_running(Graph& g, Node& node, const char* op, bool product) {
  if (node.inputs.size() != 2 || node.inputs[0] < 0 || node.inputs[1] < 0)
    fail("node ", node_label(node), ": ", op, " takes x and axis");
  const Value& x = input(g, node, 0);
  if (!takes(x.dtype))
    return cat(op, " on ", dtype_name(x.dtype), " is not supported (float32, float16, "
               "float64, int32 and int64 are)");
  if (x.shape.empty())
    return cat(op, " of a scalar is not supported (x needs a dim to run along)");
  const Value& axis = input(g, node, 1);
  if (!axis.is_constant) return run_time_reason("axis");
  const std::vector<int64_t> a = read_ints(axis);
  if (a.size() != 1)
    fail("node ", node_label(node), ": its axis '", axis.name, "' holds ", a.size(),
         " elements (", op, " takes one)");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  node.op.axis = static_cast<int32_t>(normalize_axis(node, a[0], rank));
  node.op.exclusive = attr_int(node, "exclusive", 0) != 0;
  node.op.reverse = attr_int(node, "reverse", 0) != 0;
  node.op.product = product;
  const Shape shape = x.shape;
  const DataType dtype = x.dtype;
  node.inputs.resize(1);  // the step reads x; the axis is in its params
  return resolve_as(g, node, fb::OpFamily::CumSum, dtype, shape);
}

std::string check_cum_sum(Graph& g, Node& node) { return check_running(g, node, "CumSum", false); }
std::string check_cum_prod(Graph& g, Node& node) { return check_running(g, node, "CumProd", true); }

constexpr OpRow kRows[] = {
    {"CumProd", check_cum_prod, "float32, float16, float64, int32, int64",
     "axis a constant; exclusive and reverse; integers wrap", 26},
    {"CumSum", check_cum_sum, "float32, float16, float64, int32, int64",
     "axis a constant; exclusive and reverse"},
};

StepParamsOffset serialize_cum_sum(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(
      fb::CreateCumSumParams(fbb, s.op.axis, s.op.exclusive, s.op.reverse, s.op.product));
}

}  // namespace

const FamilyRules cum_sum_rules = {serialize_cum_sum, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
