// Check functions of the elementwise, softmax, concat and shape-only ops (see support_ops.h).
// Concat and the shape-only ops move bytes and take every plan dtype; the rest compute float32.
#include "converter/src/support_ops.h"

#include <limits>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"

namespace jetplan::converter::support {

std::string check_activation(Graph& g, Node& node) {
  // Clip of int8 and uint8 (opset 12 and later): a float32 Clip between two Casts, exact (every
  // value and bound of 8 bits is a float, and so is the clipped result). Never fused (expand).
  const DataType dtype = input(g, node, 0).dtype;
  const bool byte_clip = node.op_type == "Clip" && g.opset >= 12 &&
                         (dtype == DataType::kInt8 || dtype == DataType::kUInt8);
  if (!byte_clip)
    if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  using fb::ActivationKind;
  const std::string& op = node.op_type;
  ActivationDesc act;
  if (op == "Relu") {
    act.kind = ActivationKind::Relu;
  } else if (op == "Sigmoid") {
    act.kind = ActivationKind::Sigmoid;
  } else if (op == "Tanh") {
    act.kind = ActivationKind::Tanh;
  } else if (op == "LeakyRelu") {
    act = {ActivationKind::LeakyRelu, attr_float(node, "alpha", 0.01f), 0.f};
  } else if (op == "Elu") {
    act = {ActivationKind::Elu, attr_float(node, "alpha", 1.f), 0.f};
  } else if (op == "HardSigmoid") {
    act = {ActivationKind::HardSigmoid, attr_float(node, "alpha", 0.2f),
           attr_float(node, "beta", 0.5f)};
  } else if (op == "HardSwish") {
    act.kind = ActivationKind::HardSwish;
  } else if (op == "Selu") {
    // The plan's Selu has alpha and gamma in alpha and beta.
    act = {ActivationKind::Selu, attr_float(node, "alpha", 1.67326319217681884765625f),
           attr_float(node, "gamma", 1.05070102214813232421875f)};
  } else {  // Clip: the bounds are attributes before opset 11, optional inputs since.
    // Finite stand-ins for "no bound": a plan should carry no infinities.
    float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    if (g.opset < 11) {
      lo = attr_float(node, "min", lo);
      hi = attr_float(node, "max", hi);
    } else {
      if (has_input(node, 1) && !constant_scalar(g, node, 1, &lo))
        return "its min input is computed at run time (jetplan needs a constant scalar)";
      if (has_input(node, 2) && !constant_scalar(g, node, 2, &hi))
        return "its max input is computed at run time (jetplan needs a constant scalar)";
    }
    if (lo > hi) return cat("min ", lo, " is greater than max ", hi);
    act = {ActivationKind::Clip, lo, hi};
  }
  node.op.family = fb::OpFamily::Activation;
  node.op.act = act;
  node.inputs.resize(1);  // Clip's bounds now live in act
  if (byte_clip) {
    node.op.tensor.expand = TensorExpand::kPromote;
    node.op.tensor.compute_dtype = static_cast<int32_t>(DataType::kFloat32);
  }
  set_output_typed(g, node, 0, dtype, input(g, node, 0).shape);
  return "";
}

std::string check_binary(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (jetplan's elementwise ops take 2)");
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  const Shape out = broadcast_or_fail(node, input(g, node, 0).shape, input(g, node, 1).shape);
  using fb::BinaryOp;
  const std::string& op = node.op_type;
  node.op.binary = op == "Add"   ? BinaryOp::Add
                   : op == "Sub" ? BinaryOp::Sub
                   : op == "Mul" ? BinaryOp::Mul
                   : op == "Div" ? BinaryOp::Div
                   : op == "Max" ? BinaryOp::Max
                   : op == "Min" ? BinaryOp::Min
                                 : BinaryOp::Pow;
  node.op.family = fb::OpFamily::Binary;
  set_output(g, node, out);
  return "";
}

// PRelu: a Binary step x < 0 ? x * slope : x. The slope broadcasts to X only (ONNX's
// unidirectional broadcasting): the output has X's shape.
std::string check_prelu(Graph& g, Node& node) {
  if (node.inputs.size() != 2 || !has_input(node, 0) || !has_input(node, 1))
    return cat(node.inputs.size(), " inputs (PRelu takes X and slope)");
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const Shape& slope = input(g, node, 1).shape;
  if (broadcast_or_fail(node, x, slope) != x)
    fail("node ", node_label(node), ": slope ", shape_str(slope), " does not broadcast to X ",
         shape_str(x), " (PRelu broadcasts the slope to X only)");
  node.op.family = fb::OpFamily::Binary;
  node.op.binary = fb::BinaryOp::PRelu;
  set_output(g, node, x);
  return "";
}

// Before opset 13, softmax flattens x to 2-D at `axis` and normalizes each row; since then it
// normalizes along the one dim `axis`. The plan step has the opset 13 meaning, so the old one
// either maps onto one dim (when at most one of the flattened trailing dims exceeds 1) or runs
// on a 2-D view of x (lower() adds the Copy steps).
std::string check_softmax(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) fail("node ", node_label(node), ": softmax of a scalar");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", g.opset < 13 ? 1 : -1), rank);
  node.op.family = fb::OpFamily::Softmax;
  node.op.log = node.op_type == "LogSoftmax";
  node.op.axis = static_cast<int32_t>(axis);
  if (g.opset < 13) {
    int wide = 0;
    int64_t last_wide = rank - 1;
    for (int64_t i = axis; i < rank; ++i)
      if (x[i] != 1) {
        ++wide;
        last_wide = i;
      }
    if (wide <= 1) {
      node.op.axis = static_cast<int32_t>(last_wide);
    } else {
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x[i];
      node.op.softmax_view = {outer, inner};
      node.op.axis = 1;
    }
  }
  set_output(g, node, x);
  return "";
}

std::string check_concat(Graph& g, Node& node) {
  const size_t n = node.inputs.size();
  if (n < 1 || n > 64) return cat(n, " inputs (jetplan concatenates 1 to 64)");
  // Concat moves bytes: any plan dtype, the same for every input.
  for (size_t i = 0; i < n; ++i) {
    if (std::string r = plan_dtype_input(g, node, i); !r.empty()) return r;
    if (input(g, node, i).dtype != input(g, node, 0).dtype)
      return cat("inputs differ in dtype (", dtype_name(input(g, node, 0).dtype), " and ",
                 dtype_name(input(g, node, i).dtype), ")");
  }
  if (!has_attr(node, "axis")) fail("node ", node_label(node), ": the axis attribute is missing");
  const Shape& first = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) fail("node ", node_label(node), ": Concat of scalars");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  Shape out = first;
  out[axis] = 0;
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = input(g, node, i).shape;
    bool same = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; same && d < rank; ++d) same = d == axis || s[d] == first[d];
    if (!same)
      fail("node ", node_label(node), ": shape mismatch: cannot concatenate ", shape_str(first),
           " and ", shape_str(s), " on axis ", axis);
    out[axis] += s[axis];
  }
  node.op.family = fb::OpFamily::Concat;
  node.op.axis = static_cast<int32_t>(axis);
  set_output_typed(g, node, 0, input(g, node, 0).dtype, out);
  return "";
}

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
  node.op.family = fb::OpFamily::Copy;
  node.inputs.resize(1);  // the shape or axes input was read above
  set_output_typed(g, node, 0, x_dtype, out);
  return "";
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
  node.op.family = fb::OpFamily::Copy;
  node.op.removable = true;
  node.inputs.resize(1);  // Dropout's ratio and training_mode
  const Value& x = input(g, node, 0);
  set_output_typed(g, node, 0, x.dtype, x.shape);
  return "";
}

}  // namespace jetplan::converter::support
