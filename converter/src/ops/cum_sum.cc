// The CumSum family: ONNX CumSum (opsets 11 and 14; 14 adds float16 and bfloat16), its axis a
// constant input.
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

std::string check_cum_sum(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || node.inputs[0] < 0 || node.inputs[1] < 0)
    fail("node ", node_label(node), ": CumSum takes x and axis");
  const Value& x = input(g, node, 0);
  if (!takes(x.dtype))
    return cat("CumSum on ", dtype_name(x.dtype), " is not supported (float32, float16, "
               "float64, int32 and int64 are)");
  if (x.shape.empty()) return "CumSum of a scalar is not supported (x needs a dim to sum along)";
  const Value& axis = input(g, node, 1);
  if (!axis.is_constant) return run_time_reason("axis");
  const std::vector<int64_t> a = read_ints(axis);
  if (a.size() != 1)
    fail("node ", node_label(node), ": its axis '", axis.name, "' holds ", a.size(),
         " elements (CumSum takes one)");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  node.op.axis = static_cast<int32_t>(normalize_axis(node, a[0], rank));
  node.op.exclusive = attr_int(node, "exclusive", 0) != 0;
  node.op.reverse = attr_int(node, "reverse", 0) != 0;
  const Shape shape = x.shape;
  const DataType dtype = x.dtype;
  node.inputs.resize(1);  // the step reads x; the axis is in its params
  return resolve_as(g, node, fb::OpFamily::CumSum, dtype, shape);
}

constexpr OpRow kRows[] = {
    {"CumSum", check_cum_sum, "float32, float16, float64, int32, int64",
     "axis a constant; exclusive and reverse"},
};

StepParamsOffset serialize_cum_sum(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateCumSumParams(fbb, s.op.axis, s.op.exclusive, s.op.reverse));
}

}  // namespace

const FamilyRules cum_sum_rules = {serialize_cum_sum, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
