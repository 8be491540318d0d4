// The Binary family: float32 two-input arithmetic (its ONNX ops have their rows in elementwise.cc,
// which decides by dtype and hands float32 here: check_binary) and PRelu.
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

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
  return resolve_as(g, node, fb::OpFamily::Binary, out);
}

namespace {

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
  node.op.binary = fb::BinaryOp::PRelu;
  return resolve_as(g, node, fb::OpFamily::Binary, x);
}

constexpr OpRow kRows[] = {
    {"RotaryEmbedding", nullptr, "float32 (position_ids: int64 or int32)",
     "runs as its Gather, Slice, Mul, Sub, Add and Concat graph; 3-D (num_heads) and 4-D "
     "input, rotary_embedding_dim, interleaved, with or without position_ids",
     23, decompose_rotary_embedding},
    {"PRelu", check_prelu, "float32",
     "the slope broadcasts to X (unidirectional); a Binary step, fused with a following "
     "activation"},
};

StepParamsOffset serialize_binary(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const fb::Activation act = activation(s.op.act);
  return params(fb::CreateBinaryParams(fbb, s.op.binary, &act));
}

}  // namespace

const FamilyRules binary_rules = {serialize_binary, expand_promoted, rows_of(kRows),
                                  fb::PointwiseInstrKind::Binary, NhwcRule::kBinary};

}  // namespace jetplan::converter::ops
