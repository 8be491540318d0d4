// The Copy family: the shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze) and Identity,
// Dropout (removed where they can be); every view the passes add is a Copy step too.
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

// Reshape, Flatten, Squeeze and Unsqueeze are a Copy (bytes): any plan dtype.
std::string check_reshape(Graph& g, Node& node) {
  if (std::string r = plan_dtype_input(g, node, 0); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const DataType x_dtype = input(g, node, 0).dtype;
  const std::string& op = node.op_type;
  Shape out;
  if (op == "Reshape") {
    if (!has_input(node, 1) || !input(g, node, 1).is_constant)
      return "its shape input is computed at run time (jetplan needs it constant)";
    const std::vector<int64_t> spec = read_ints(input(g, node, 1));
    const bool allow_zero = g.opset >= 14 && attr_int(node, "allowzero", 0) != 0;
    out = reshape_shape(node, x, spec, allow_zero);
  } else if (op == "Flatten") {
    out = flatten_shape(node, x, attr_int(node, "axis", 1));
  } else {
    std::vector<int64_t> axes;
    if (!squeeze_axes(g, node, &axes))
      return "its axes input is computed at run time (jetplan needs it constant)";
    out = op == "Squeeze" ? squeeze_shape(node, x, axes) : unsqueeze_shape(node, x, axes);
  }
  node.inputs.resize(1);  // the shape or axes input was read above
  return resolve_as(g, node, fb::OpFamily::Copy, x_dtype, out);
}

std::string check_identity(Graph& g, Node& node) {
  if (std::string r = plan_dtype_input(g, node, 0); !r.empty()) return r;
  if (node.op_type == "Dropout") {
    if (g.opset >= 12 && has_input(node, 2)) {
      const Value& training = input(g, node, 2);
      if (!training.is_constant) return "its training_mode input is computed at run time";
      const std::vector<int64_t> on = read_ints(training);
      if (on.empty() || on[0] != 0) {
        // Training with ratio 0 drops nothing: the inference op, mask included.
        float ratio = 0.5f;
        if (has_input(node, 1) && !constant_scalar(g, node, 1, &ratio))
          return "training_mode is on and its ratio input is computed at run time";
        if (ratio != 0.f)
          return "training_mode is on with a nonzero ratio (jetplan runs inference only)";
      }
    }
    // The mask of inference keeps everything: a constant of trues in x's shape.
    if (node.outputs.size() > 1 && node.outputs[1] >= 0) {
      const Value& x = input(g, node, 0);
      Value& mask = g.values[node.outputs[1]];
      if (mask.shape_known && mask.shape != x.shape)
        fail("node ", node_label(node), ": mask '", mask.name, "' has shape ",
             shape_str(mask.shape), " but the data ", shape_str(x.shape));
      if (checked_bytes(x.shape, 1) < 0)
        fail("node ", node_label(node), ": mask shape ", shape_str(x.shape), " is too large");
      mask.dtype = DataType::kBool;
      mask.shape = x.shape;
      mask.shape_known = true;
      mask.is_constant = true;
      mask.data.assign(static_cast<size_t>(shape_count(x.shape)), 1);
      mask.producer = -1;
      node.outputs.resize(1);
    }
  }
  node.op.removable = true;
  node.inputs.resize(1);  // Dropout's ratio and training_mode
  const Value& x = input(g, node, 0);
  return resolve_as(g, node, fb::OpFamily::Copy, x.dtype, x.shape);
}

constexpr OpRow kRows[] = {
    {"Dropout", check_identity, kAnyPlanDtype,
     "removed (inference); the mask output is a constant of trues; training_mode a constant 0, "
     "or 1 with a constant ratio of 0"},
    {"Flatten", check_reshape, kAnyPlanDtype, ""},
    {"Identity", check_identity, kAnyPlanDtype, "removed"},
    {"Reshape", check_reshape, kAnyPlanDtype, "shape input constant (after folding)"},
    {"Squeeze", check_reshape, kAnyPlanDtype, "axes constant (after folding)"},
    {"Unsqueeze", check_reshape, kAnyPlanDtype, "axes constant (after folding)"},
};

}  // namespace

const FamilyRules copy_rules = {serialize_empty<fb::CopyParams>, nullptr, rows_of(kRows),
                                fb::PointwiseInstrKind::Load, NhwcRule::kCopy};

}  // namespace jetplan::converter::ops
