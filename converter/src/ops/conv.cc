// The Conv family: ONNX Conv (its window: window.h), with the epilogue the fusions add (bias,
// residual, activation).
#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
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

// CausalConvWithState (opset 27; a streaming depthwise Conv1d, as in state-space and speech
// models): its definition's graph. padded = Concat(past_state (zeros when left out), input) along
// the length; output = the depthwise Conv of padded (group C, no padding) [+ bias], times its
// Sigmoid for activation silu or swish; present_state = padded's last K - 1 positions.
std::string decompose_causal_conv(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0, 1, 2, 3}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape, w = input(g, node, 1).shape;
  if (x.size() != 3 || w.size() != 3 || w[0] != x[1] || w[1] != 1 || w[2] < 1)
    fail("node ", node_label(node), ": input ", shape_str(x), " and weight ", shape_str(w),
         " are not [B, C, L] and [C, 1, K]");
  const int64_t k = w[2];
  const Shape state = {x[0], x[1], k - 1};
  const int64_t state_bytes = checked_bytes(state, sizeof(float));
  if (state_bytes < 0 || state_bytes > (int64_t{1} << 30))
    fail("node ", node_label(node), ": its state ", shape_str(state), " is too large");
  if (has_input(node, 3) && input(g, node, 3).shape != state)
    fail("node ", node_label(node), ": past_state ", shape_str(input(g, node, 3).shape),
         " is not ", shape_str(state));
  const std::string act = attr_string(node, "activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    fail("node ", node_label(node), ": activation '", act, "' (none, silu or swish)");
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  int padded = node.inputs[0];
  if (k > 1) {
    const int past = has_input(node, 3)
                         ? node.inputs[3]
                         : b.floats("zero_state", state, std::vector<float>(size_t(shape_count(state)), 0.f));
    padded = b.add("Concat", "padded", {past, node.inputs[0]}, {{"axis", A::int_attr(2)}});
  }
  std::vector<int> conv_in = {padded, node.inputs[1]};
  if (has_input(node, 2)) conv_in.push_back(node.inputs[2]);
  const bool silu = act != "none";
  const int conv = b.add("Conv", "conv", conv_in,
                         {{"group", A::int_attr(x[1])}, {"kernel_shape", A::ints_attr({k})}},
                         silu ? -1 : node.outputs[0]);
  if (silu) b.add("Mul", "silu", {conv, b.add("Sigmoid", "gate", {conv})}, {}, node.outputs[0]);
  if (node.outputs.size() > 1 && node.outputs[1] >= 0)
    b.add("Slice", "present_state",
          {padded, b.ints("state_start", {x[2]}), b.ints("state_end", {x[2] + k - 1}),
           b.ints("state_axis", {2})},
          {}, node.outputs[1]);
  return "";
}

constexpr OpRow kRows[] = {
    {"CausalConvWithState", nullptr, "float32",
     "[B, C, L] input, [C, 1, K] weight; runs as its Concat with the state, depthwise Conv "
     "(fused SiLU) and Slice of the new state",
     27, decompose_causal_conv},
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
                           op.residual_scale, op.y_scale, op.residual_after_act);
  return params(p);
}

}  // namespace

const FamilyRules conv_rules = {serialize_conv, nullptr, rows_of(kRows),
                                fb::PointwiseInstrKind::Load, NhwcRule::kConv};

}  // namespace jetplan::converter::ops
