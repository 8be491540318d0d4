// The Where family: ONNX Where (bool condition, numpy broadcasting of all three inputs).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
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

constexpr OpRow kRows[] = {
    {"Where", check_where, kAnyPlanDtype,
     "condition bool; X and Y of one dtype; numpy broadcasting of all three"},
};

}  // namespace

const FamilyRules where_rules = {serialize_empty<fb::WhereParams>, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
