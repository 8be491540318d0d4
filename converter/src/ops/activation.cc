// The Activation family: the ONNX activations (the erf form of Gelu comes from unary.cc), fused
// into the step before them where they can be.
#include <cmath>
#include <limits>

#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

namespace {

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
    node.op.expand = Expansion::kPromote;
    node.op.compute_dtype = static_cast<int32_t>(DataType::kFloat32);
  }
  set_output_typed(g, node, 0, dtype, input(g, node, 0).shape);
  return "";
}

constexpr const char* kNotes =
    "fused into the preceding Conv, Gemm or elementwise step where it can be";

// Celu (opset 12) as its definition: alpha * Elu(x / alpha).
std::string decompose_celu(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const float alpha = attr_float(node, "alpha", 1.f);
  if (!(alpha != 0.f) || !std::isfinite(alpha)) return cat("alpha ", alpha, " must be finite and not 0");
  OnnxNodes b(g, node, out);
  const int a = b.scalar("alpha", alpha);
  const int elu = b.add("Elu", "elu", {b.add("Div", "scaled", {node.inputs[0], a})});
  b.add("Mul", "celu", {elu, a}, {}, node.outputs[0]);
  return "";
}

// x * Sigmoid(alpha * x) into `to`: alpha 1 as Mul(x, Sigmoid(x)), which the pointwise fusion
// turns into one SiLU activation.
int swish(OnnxNodes& b, int x, float alpha, int to = -1) {
  const int gate = alpha == 1.f ? x : b.add("Mul", "scaled", {x, b.scalar("alpha", alpha)});
  return b.add("Mul", "swish", {x, b.add("Sigmoid", "sigmoid", {gate})}, {}, to);
}

// Swish (opset 24): x * Sigmoid(alpha * x).
std::string decompose_swish(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const float alpha = attr_float(node, "alpha", 1.f);
  if (!std::isfinite(alpha)) return cat("alpha ", alpha, " must be finite");
  OnnxNodes b(g, node, out);
  swish(b, node.inputs[0], alpha, node.outputs[0]);
  return "";
}

// SwiGLU (opset 28): Swish_alpha(A) * B, A and B of one shape.
std::string decompose_swiglu(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  if (input(g, node, 0).shape != input(g, node, 1).shape)
    fail("node ", node_label(node), ": A ", shape_str(input(g, node, 0).shape), " and B ",
         shape_str(input(g, node, 1).shape), " differ in shape");
  const float alpha = attr_float(node, "alpha", 1.f);
  if (!std::isfinite(alpha)) return cat("alpha ", alpha, " must be finite");
  OnnxNodes b(g, node, out);
  b.add("Mul", "gated", {swish(b, node.inputs[0], alpha), node.inputs[1]}, {}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"Swish", nullptr, "float32", "runs as x * Sigmoid(alpha * x) (alpha 1: one SiLU step)", 24,
     decompose_swish},
    {"SwiGLU", nullptr, "float32", "A and B of one shape; runs as Swish(A) * B", 28,
     decompose_swiglu},
    {"Celu", nullptr, "float32", "runs as alpha * Elu(x / alpha), its definition", 0,
     decompose_celu},
    {"Clip", check_activation, "float32; int8, uint8 (in float32, opset 12 and later)",
     "min and max constant scalars (inputs since opset 11)"},
    {"Elu", check_activation, "float32", kNotes},
    {"HardSigmoid", check_activation, "float32", kNotes},
    {"HardSwish", check_activation, "float32", kNotes},
    {"LeakyRelu", check_activation, "float32", kNotes},
    {"Relu", check_activation, "float32", kNotes},
    {"Selu", check_activation, "float32", kNotes},
    {"Sigmoid", check_activation, "float32", kNotes},
    {"Tanh", check_activation, "float32", kNotes},
};

StepParamsOffset serialize_activation(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const fb::Activation act = activation(s.op.act);
  return params(fb::CreateActivationParams(fbb, &act));
}

}  // namespace

const FamilyRules activation_rules = {serialize_activation, expand_promoted, rows_of(kRows),
                                      fb::PointwiseInstrKind::Activation, NhwcRule::kFollowsInput};

}  // namespace jetplan::converter::ops
