// The ConvTranspose family: ONNX ConvTranspose, whose window (window.h for what it shares with
// Conv) crops the full transposed convolution by pads, output_shape or auto_pad.
#include <algorithm>

#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
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

// Col2Im (opset 18): the sum of the patches of input [N, C * K, L] (K the block's elements, L
// the blocks) into an image [N, C, image_shape...]. It is the transpose of the convolution
// that cuts those patches, so it runs as one:
//   ConvTranspose(Reshape(input, [N, C * K, blocks...]), one-hot w [C * K, 1, block...],
//                 group C, the strides, dilations and pads, output_padding the rows the
//                 blocks leave over)
// where w's filter c * K + k holds a 1 at the block's element k. Each image element sums the
// patch elements that land on it, as Col2Im's definition does.
std::string decompose_col2im(Graph& g, const Node& node, std::vector<Node>* out) {
  const Value& x = input(g, node, 0);
  if (x.dtype != DataType::kFloat32) return cat("input '", x.name, "' is ", dtype_name(x.dtype), " (jetplan takes float32)");
  if (!input(g, node, 1).is_constant) return run_time_reason("image_shape");
  if (!input(g, node, 2).is_constant) return run_time_reason("block_shape");
  const Shape xs = x.shape;
  const std::vector<int64_t> image = read_ints(input(g, node, 1));
  const std::vector<int64_t> block = read_ints(input(g, node, 2));
  const size_t r = image.size();
  if (xs.size() != 3) return cat("input must be [N, C * block elements, blocks] (it is ", shape_str(xs), ")");
  if (r < 1 || r > 3 || block.size() != r)
    return cat("image_shape and block_shape must name the same 1 to 3 dims (", image.size(), " and ",
               block.size(), ")");
  const auto per_dim = [&](const char* name, int64_t fallback, size_t count) {
    std::vector<int64_t> v = attr_ints(node, name, std::vector<int64_t>(count, fallback));
    if (v.size() != count)
      fail("node ", node_label(node), ": ", name, " has ", v.size(), " values, not ", count);
    return v;
  };
  const std::vector<int64_t> strides = per_dim("strides", 1, r), dilations = per_dim("dilations", 1, r);
  const std::vector<int64_t> pads = per_dim("pads", 0, 2 * r);
  int64_t k = 1, blocks = 1;
  std::vector<int64_t> counts(r), leftover(r);
  constexpr int64_t kMaxDim = int64_t{1} << 24;  // keeps the arithmetic below far from overflow
  for (size_t d = 0; d < r; ++d) {
    if (image[d] < 1 || block[d] < 1 || strides[d] < 1 || dilations[d] < 1 || pads[d] < 0 ||
        pads[d + r] < 0)
      fail("node ", node_label(node), ": image_shape, block_shape, strides and dilations must be "
           "positive and pads not negative");
    if (image[d] > kMaxDim || block[d] > kMaxDim || strides[d] > kMaxDim ||
        dilations[d] > kMaxDim || pads[d] > kMaxDim || pads[d + r] > kMaxDim)
      fail("node ", node_label(node), ": image_shape, block_shape, strides, dilations and pads "
           "past ", kMaxDim);
    const int64_t span = image[d] + pads[d] + pads[d + r] - dilations[d] * (block[d] - 1) - 1;
    if (span < 0) fail("node ", node_label(node), ": the block does not fit the padded image along dim ", d);
    counts[d] = span / strides[d] + 1;
    leftover[d] = span % strides[d];
    k *= block[d];
    blocks *= counts[d];
    if (k > std::max<int64_t>(xs[1], 1) || blocks > std::max<int64_t>(xs[2], 1))
      fail("node ", node_label(node), ": input ", shape_str(xs), " holds fewer than the block's "
           "elements or the blocks along dim ", d);
  }
  if (xs[1] % k != 0 || xs[2] != blocks)
    fail("node ", node_label(node), ": input ", shape_str(xs), " holds no [N, C * ", k, ", ", blocks,
         "] patches of the blocks");
  const int64_t channels = xs[1] / k;
  if (k > (int64_t{1} << 26) / std::max<int64_t>(xs[1], 1))
    return cat("its one-hot weight of ", xs[1], "x", k, " elements is too large");
  Shape grid = {xs[0], xs[1]};
  grid.insert(grid.end(), counts.begin(), counts.end());
  Shape wshape = {xs[1], 1};
  wshape.insert(wshape.end(), block.begin(), block.end());
  std::vector<float> w(size_t(xs[1] * k), 0.f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t e = 0; e < k; ++e) w[size_t(((c * k) + e) * k + e)] = 1.f;
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const int patches = b.add("Reshape", "patches", {node.inputs[0], b.ints("grid", grid)});
  b.add("ConvTranspose", "sum", {patches, b.floats("one_hot", wshape, w)},
        {{"group", A::int_attr(channels)}, {"kernel_shape", A::ints_attr(block)},
         {"strides", A::ints_attr(strides)}, {"dilations", A::ints_attr(dilations)},
         {"pads", A::ints_attr(pads)}, {"output_padding", A::ints_attr(leftover)}},
        node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"Col2Im", nullptr, "float32",
     "image_shape and block_shape constant; 1 to 3 spatial dims; runs as a ConvTranspose of "
     "one-hot filters (group C) over the patches",
     18, decompose_col2im},
    {"ConvTranspose", check_conv_transpose, "float32",
     "1 to 3 spatial dims; groups, dilations, output_padding, output_shape, auto_pad"},
};

StepParamsOffset serialize_conv_transpose(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  auto p = fb::CreateConvTransposeParamsDirect(fbb, op.groups, &op.kernel, &op.stride, &op.dilation,
                                               &op.pad_begin, &op.pad_end, &op.output_padding,
                                               op.has_bias, op.has_residual, &act,
                                               op.y_channel_offset);
  return params(p);
}

}  // namespace

const FamilyRules conv_transpose_rules = {serialize_conv_transpose, nullptr, rows_of(kRows),
                                           fb::PointwiseInstrKind::Load, NhwcRule::kUpsample};

}  // namespace jetplan::converter::ops
