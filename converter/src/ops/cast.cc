// The Cast family: Cast and CastLike between any two plan dtypes; the passes add Cast steps too
// (promotion to a compute dtype, float16 plans).
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_cast(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
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
  if (to == x.dtype) return resolve_as_copy(g, node, x.dtype, x.shape);
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Cast, to, x.shape);
}

constexpr const char* kCastNotes =
    "between any two plan dtypes (float to integer truncates and saturates; to bfloat16 through "
    "float32, rounded to nearest even as ONNX's reference does)";

// Cast and CastLike of opsets 19 and 24 (saturate, round_mode) differ only where they convert
// to float8 or float4 types, which plans do not hold (refused above).
constexpr OpRow kRows[] = {
    {"Cast", check_cast, kAnyPlanDtype, kCastNotes, 24},
    {"CastLike", check_cast, kAnyPlanDtype, kCastNotes, 24},
};

}  // namespace

const FamilyRules cast_rules = {serialize_empty<fb::CastParams>, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
