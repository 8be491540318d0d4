// The DynamicQuantize family: DynamicQuantizeLinear (one step writing y, y_scale, y_zero_point).
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

// DynamicQuantizeLinear: one step writing y (uint8), y_scale and y_zero_point (scalars).
std::string check_dynamic_quantize(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (x.dtype != DataType::kFloat32)
    return cat("input '", x.name, "' is ", dtype_name(x.dtype), " (jetplan quantizes float32)");
  if (node.outputs.size() != 3 || node.outputs[1] < 0 || node.outputs[2] < 0)
    fail("node ", node_label(node),
         ": DynamicQuantizeLinear has 3 outputs (y, y_scale, "
         "y_zero_point), the node names ",
         node.outputs.size());
  const Shape xs = x.shape;
  node.op.family = fb::OpFamily::DynamicQuantize;
  node.op.quant = QuantDesc{};
  set_output_typed(g, node, 0, DataType::kUInt8, xs);
  set_output_typed(g, node, 1, DataType::kFloat32, {});
  set_output_typed(g, node, 2, DataType::kUInt8, {});
  return "";
}

constexpr OpRow kRows[] = {
    {"DynamicQuantizeLinear", check_dynamic_quantize, "float32 -> uint8",
     "y_scale and y_zero_point from x's range widened to hold 0; round half to even, "
     "saturating"},
};

}  // namespace

const FamilyRules dynamic_quantize_rules = {serialize_empty<fb::DynamicQuantizeParams>, nullptr,
                                            rows_of(kRows)};

}  // namespace jetplan::converter::ops
