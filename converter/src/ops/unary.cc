// The Unary family: the one-input math of kernels/kernels.h UnaryOp, float16 and 8-bit
// integers computed in a wider dtype between Cast steps; Gelu of float32 is an Activation (Gelu,
// or GeluTanh for approximate tanh: the same host bits as the Unary GeluTanh of float16).
#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"
#include "kernels/kernels.h"

namespace jetplan::converter::ops {

namespace {

std::string check_unary(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  if (node.op_type == "Gelu" && attr_string(node, "approximate", "none") == "none") {
    // The erf form is an activation of the core family (float32).
    if (x.dtype != DataType::kFloat32)
      return cat("Gelu on ", dtype_name(x.dtype), " is not supported (float32 only)");
    node.op.act.kind = fb::ActivationKind::Gelu;
    return resolve_as(g, node, fb::OpFamily::Activation, x.dtype, x.shape);
  }
  if (node.op_type == "Gelu" && attr_string(node, "approximate", "none") == "tanh" &&
      x.dtype == DataType::kFloat32) {  // an activation too, so it fuses into an epilogue
    node.op.act.kind = fb::ActivationKind::GeluTanh;
    return resolve_as(g, node, fb::OpFamily::Activation, x.dtype, x.shape);
  }
  kernels::UnaryOp op;
  if (!fold::unary_op_of(node, &op)) {
    if (node.op_type == "Gelu")
      fail("node ", node_label(node), ": unknown approximate '",
           attr_string(node, "approximate", ""), "' (none or tanh)");
    return "detect_positive and detect_negative are both 0 (the output is all false)";
  }
  const DataType compute = fold::unary_compute_dtype(op, x.dtype);
  if (compute == DataType::kUndefined) {
    if (op == kernels::UnaryOp::kNot) return cat("Not on ", dtype_name(x.dtype), " (bool only)");
    return cat(node.op_type, " on ", dtype_name(x.dtype),
               " is not supported (jetplan computes it in float32 or float16",
               op == kernels::UnaryOp::kAbs || op == kernels::UnaryOp::kNeg ||
                       op == kernels::UnaryOp::kSign
                   ? ", and integers of 8, 32 and 64 bits)"
                   : ")");
  }
  node.op.family = fb::OpFamily::Unary;
  node.op.unary = static_cast<fb::UnaryOp>(op);
  if (compute != x.dtype) {
    node.op.expand = Expansion::kPromote;
    node.op.compute_dtype = static_cast<int32_t>(compute);
  }
  node.inputs.resize(1);
  set_output_typed(g, node, 0, kernels::unary_is_predicate(op) ? DataType::kBool : x.dtype,
                   x.shape);
  return "";
}

constexpr const char* kFloatMath = "float32, float16 (computed in float32)";
constexpr const char* kSignedMath =
    "float32, float16 (in float32), int8, uint8 (in int32), int32, int64";
constexpr const char* kPredicate = "float32, float16 (in float32) -> bool";
constexpr const char* kLogic = "bool";

constexpr OpRow kRows[] = {
    {"Abs", check_unary, kSignedMath, ""},
    {"Acos", check_unary, kFloatMath, ""},
    {"Acosh", check_unary, kFloatMath, ""},
    {"Asin", check_unary, kFloatMath, ""},
    {"Asinh", check_unary, kFloatMath, ""},
    {"Atan", check_unary, kFloatMath, ""},
    {"Atanh", check_unary, kFloatMath, ""},
    {"Ceil", check_unary, kFloatMath, ""},
    {"Cos", check_unary, kFloatMath, ""},
    {"Cosh", check_unary, kFloatMath, ""},
    {"Erf", check_unary, kFloatMath, ""},
    {"Exp", check_unary, kFloatMath, ""},
    {"Floor", check_unary, kFloatMath, ""},
    {"Gelu", check_unary, kFloatMath,
     "approximate none (erf form, float32 only, an activation) or tanh", 20},
    {"IsInf", check_unary, kPredicate, "detect_positive and detect_negative not both 0", 20},
    {"IsNaN", check_unary, kPredicate, ""},
    {"Log", check_unary, kFloatMath, ""},
    {"Mish", check_unary, kFloatMath, "", 18},
    {"Neg", check_unary, kSignedMath, ""},
    {"Not", check_unary, kLogic, ""},
    {"Reciprocal", check_unary, kFloatMath, ""},
    {"Round", check_unary, kFloatMath, "half to even"},
    {"Sign", check_unary, kSignedMath, ""},
    {"Sin", check_unary, kFloatMath, ""},
    {"Sinh", check_unary, kFloatMath, ""},
    {"Softplus", check_unary, kFloatMath, ""},
    {"Softsign", check_unary, kFloatMath, ""},
    {"Sqrt", check_unary, kFloatMath, ""},
    {"Tan", check_unary, kFloatMath, ""},
};

StepParamsOffset serialize_unary(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateUnaryParams(fbb, s.op.unary));
}

}  // namespace

const FamilyRules unary_rules = {serialize_unary, expand_promoted, rows_of(kRows),
                                 fb::PointwiseInstrKind::Unary};

}  // namespace jetplan::converter::ops
