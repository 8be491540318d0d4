// The Conv family: ONNX Conv (its window: window.h), with the epilogue the fusions add (bias,
// residual, activation).
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/window.h"

namespace jetplan::converter::ops {

namespace {

std::string check_conv(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const Shape& w = input(g, node, 1).shape;
  if (std::string r = spatial_rank_reason(x); !r.empty()) return r;
  check_weight_rank(node, x, w);
  OpDesc& op = node.op;
  conv_groups(node, x, w, &op);
  kernel_of_weight(node, w, &op);
  if (has_input(node, 2) && input(g, node, 2).shape != Shape{w[0]})
    fail("node ", node_label(node), ": shape mismatch: bias ", shape_str(input(g, node, 2).shape),
         " for ", w[0], " output channels");
  resolve_window(node, x, WindowRules{}, &op);
  return resolve_as(g, node, fb::OpFamily::Conv, window_output(node, x, w[0], op));
}

constexpr OpRow kRows[] = {
    {"Conv", check_conv, "float32",
     "1 to 3 spatial dims; bias, BatchNorm, residual Add and activation fused"},
};

StepParamsOffset serialize_conv(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  const bool has_bias = has_third_operand(s);
  auto p =
      fb::CreateConvParams(fbb, op.groups, ints(fbb, op.kernel), ints(fbb, op.stride),
                           ints(fbb, op.dilation), ints(fbb, op.pad_begin), ints(fbb, op.pad_end),
                           has_bias, op.has_residual, &act, op.y_channel_offset,
                           op.residual_scale, op.y_scale);
  return params(p);
}

}  // namespace

const FamilyRules conv_rules = {serialize_conv, nullptr, rows_of(kRows),
                                fb::PointwiseInstrKind::Load, NhwcRule::kConv};

}  // namespace jetplan::converter::ops
