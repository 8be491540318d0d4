// The ConvTranspose family: ONNX ConvTranspose, whose window (window.h for what it shares with
// Conv) crops the full transposed convolution by pads, output_shape or auto_pad.
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/window.h"

namespace jetplan::converter::ops {

namespace {

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

std::string check_conv_transpose(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const Shape& w = input(g, node, 1).shape;
  if (std::string r = spatial_rank_reason(x); !r.empty()) return r;
  check_weight_rank(node, x, w);
  const size_t spatial = x.size() - 2;
  OpDesc& op = node.op;
  op.groups = attr_int(node, "group", 1);
  if (op.groups < 1 || w[0] != x[1] || x[1] % op.groups != 0)
    fail("node ", node_label(node), ": shape mismatch: input ", shape_str(x), " with weight ",
         shape_str(w), " and group ", op.groups);
  const int64_t out_channels = w[1] * op.groups;
  kernel_of_weight(node, w, &op);
  if (has_input(node, 2) && input(g, node, 2).shape != Shape{out_channels})
    fail("node ", node_label(node), ": shape mismatch: bias ", shape_str(input(g, node, 2).shape),
         " for ", out_channels, " output channels");
  const std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  op.stride = attr_ints(node, "strides", ones);
  op.dilation = attr_ints(node, "dilations", ones);
  std::vector<int64_t>& output_padding = op.output_padding;
  output_padding = attr_ints(node, "output_padding", zeros);
  if (op.stride.size() != spatial || op.dilation.size() != spatial ||
      output_padding.size() != spatial)
    fail("node ", node_label(node), ": strides, dilations and output_padding need ", spatial,
         " entries for input ", shape_str(x));
  for (size_t i = 0; i < spatial; ++i)
    if (op.kernel[i] > kMaxWindow || op.stride[i] < 1 || op.stride[i] > kMaxWindow ||
        op.dilation[i] < 1 || op.dilation[i] > kMaxWindow || output_padding[i] < 0 ||
        output_padding[i] > kMaxWindow || x[i + 2] > kMaxWindow)
      fail("node ", node_label(node),
           ": kernel, strides and dilations must be in [1, 2^31], "
           "output_padding and the input size in [0, 2^31]");

  // The full transposed convolution has stride * (in - 1) + output_padding + span positions;
  // pads (given, or derived from output_shape / auto_pad) crop it at both ends.
  const AutoPad auto_pad = auto_pad_of(node);
  std::vector<int64_t> output_shape = attr_ints(node, "output_shape", {});
  if (output_shape.size() == spatial + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (has_attr(node, "output_shape") && output_shape.size() != spatial)
    fail("node ", node_label(node), ": output_shape needs ", spatial, " entries");
  const std::vector<int64_t> pads = attr_ints(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (pads.size() != 2 * spatial)
    fail("node ", node_label(node), ": pads needs ", 2 * spatial, " entries");
  op.pad_begin.assign(spatial, 0);
  op.pad_end.assign(spatial, 0);
  Shape out = {x[0], out_channels};
  for (size_t i = 0; i < spatial; ++i) {
    // Each term is below 2^62 (the operands are at most 2^31), so the sum fits in 128 bits.
    const __int128 wide = static_cast<__int128>(op.stride[i]) * (x[i + 2] - 1) + output_padding[i] +
                          static_cast<__int128>(op.dilation[i]) * (op.kernel[i] - 1) + 1;
    if (wide > kMaxWindow)
      fail("node ", node_label(node), ": the transposed convolution of ", shape_str(x),
           " is too large");
    const int64_t full = static_cast<int64_t>(wide);
    int64_t size = full;
    if (!output_shape.empty() || auto_pad == AutoPad::kSameUpper ||
        auto_pad == AutoPad::kSameLower) {
      // ONNX: total = full - size, split with the odd one at the end for SAME_UPPER and at the
      // beginning otherwise (floor division, as the ONNX reference; a negative total asks for
      // positions past the full convolution, which are zero + bias).
      size = output_shape.empty() ? x[i + 2] * op.stride[i] : output_shape[i];
      if (size < 1 || size > kMaxWindow)
        fail("node ", node_label(node), ": output_shape entries must be in [1, 2^31]");
      const int64_t total = full - size;
      op.pad_begin[i] =
          auto_pad == AutoPad::kSameUpper ? floor_half(total) : total - floor_half(total);
      op.pad_end[i] = total - op.pad_begin[i];
    } else if (auto_pad == AutoPad::kNotSet) {
      op.pad_begin[i] = pads[i];
      op.pad_end[i] = pads[spatial + i];
      if (pads[i] < 0 || pads[i] > kMaxWindow || pads[spatial + i] < 0 ||
          pads[spatial + i] > kMaxWindow)
        fail("node ", node_label(node), ": pads must be in [0, 2^31]");
      size = full - pads[i] - pads[spatial + i];
      if (size < 1)
        fail("node ", node_label(node), ": pads ", shape_str(pads), " crop the whole output of ",
             shape_str(x));
    }
    out.push_back(size);
  }
  op.has_bias = has_input(node, 2);
  if (!op.has_bias) node.inputs.resize(2);
  return resolve_as(g, node, fb::OpFamily::ConvTranspose, out);
}

constexpr OpRow kRows[] = {
    {"ConvTranspose", check_conv_transpose, "float32",
     "1 to 3 spatial dims; groups, dilations, output_padding, output_shape, auto_pad"},
};

StepParamsOffset serialize_conv_transpose(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  auto p = fb::CreateConvTransposeParamsDirect(fbb, op.groups, &op.kernel, &op.stride, &op.dilation,
                                               &op.pad_begin, &op.pad_end, &op.output_padding,
                                               op.has_bias, op.has_residual, &act);
  return params(p);
}

}  // namespace

const FamilyRules conv_transpose_rules = {serialize_conv_transpose, nullptr, rows_of(kRows),
                                           fb::PointwiseInstrKind::Load, NhwcRule::kUpsample};

}  // namespace jetplan::converter::ops
