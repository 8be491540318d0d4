// Window geometry shared by the convolutions and Pool (see window.h).
#include "converter/src/ops/window.h"

#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"

namespace jetplan::converter::ops {
namespace {

int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe) {
  const int64_t span = in + pb + pe - dil * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

}  // namespace

AutoPad auto_pad_of(const Node& node) {
  const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") return AutoPad::kNotSet;
  if (auto_pad == "SAME_UPPER") return AutoPad::kSameUpper;
  if (auto_pad == "SAME_LOWER") return AutoPad::kSameLower;
  if (auto_pad == "VALID") return AutoPad::kValid;
  fail("node ", node_label(node), ": unknown auto_pad '", auto_pad, "'");
}

std::string spatial_rank_reason(const Shape& x) {
  if (x.size() < 3 || x.size() > 5)
    return cat("input rank ", x.size(), " (jetplan handles 1 to 3 spatial dims: rank 3 to 5)");
  return "";
}

void check_weight_rank(const Node& node, const Shape& x, const Shape& w) {
  if (w.size() != x.size())
    fail("node ", node_label(node), ": shape mismatch: weight ", shape_str(w), " and input ",
         shape_str(x), " differ in rank");
}

void kernel_of_weight(const Node& node, const Shape& w, OpDesc* op) {
  op->kernel.assign(w.begin() + 2, w.end());
  if (has_attr(node, "kernel_shape") && attr_ints(node, "kernel_shape", {}) != op->kernel)
    fail("node ", node_label(node), ": kernel_shape ",
         shape_str(attr_ints(node, "kernel_shape", {})), " differs from the weight ", shape_str(w));
}

void conv_groups(const Node& node, const Shape& x, const Shape& w, OpDesc* op) {
  op->groups = attr_int(node, "group", 1);
  if (op->groups < 1 || op->groups > kMaxDim || w[1] * op->groups != x[1] || w[0] % op->groups != 0)
    fail("node ", node_label(node), ": shape mismatch: input ", shape_str(x), " with weight ",
         shape_str(w), " and group ", op->groups);
}

void resolve_window(const Node& node, const Shape& x, const WindowRules& rules, OpDesc* op) {
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> ones(spatial, 1);
  op->stride = attr_ints(node, "strides", ones);
  op->dilation = attr_ints(node, "dilations", ones);
  if ((rules.check_kernel_count && op->kernel.size() != spatial) || op->stride.size() != spatial ||
      op->dilation.size() != spatial)
    fail("node ", node_label(node), ": ",
         rules.check_kernel_count ? "kernel_shape, strides and dilations" : "strides and dilations",
         " need ", spatial, " entries for input ", shape_str(x));
  for (size_t i = 0; i < spatial; ++i)
    if ((rules.kernel_at_least_one && op->kernel[i] < 1) || op->stride[i] < 1 ||
        op->dilation[i] < 1 || op->kernel[i] > kMaxWindow || op->stride[i] > kMaxWindow ||
        op->dilation[i] > kMaxWindow)
      fail("node ", node_label(node), ": kernel, strides and dilations must be in [1, 2^31]");

  const AutoPad auto_pad = auto_pad_of(node);
  op->pad_begin.assign(spatial, 0);
  op->pad_end.assign(spatial, 0);
  if (auto_pad == AutoPad::kNotSet) {
    const std::vector<int64_t> pads = attr_ints(node, "pads", std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
      fail("node ", node_label(node), ": pads needs ", 2 * spatial, " entries");
    for (size_t i = 0; i < spatial; ++i) {
      op->pad_begin[i] = pads[i];
      op->pad_end[i] = pads[spatial + i];
      if (pads[i] < 0 || pads[spatial + i] < 0 || pads[i] > kMaxWindow ||
          pads[spatial + i] > kMaxWindow)
        fail("node ", node_label(node), ": pads must be in [0, 2^31]");
    }
  } else if (auto_pad == AutoPad::kSameUpper || auto_pad == AutoPad::kSameLower) {
    // Output ceil(in / stride); the odd pad goes to the end (UPPER) or the beginning (LOWER).
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t in = x[i + 2];
      const int64_t out = (in + op->stride[i] - 1) / op->stride[i];
      const int64_t needed = (out - 1) * op->stride[i] + op->dilation[i] * (op->kernel[i] - 1) + 1;
      const int64_t total = needed > in ? needed - in : 0;
      const int64_t small = total / 2;
      op->pad_begin[i] = auto_pad == AutoPad::kSameUpper ? small : total - small;
      op->pad_end[i] = total - op->pad_begin[i];
    }
  }
}

Shape window_output(const Node& node, const Shape& x, int64_t channels, const OpDesc& op) {
  Shape out = {x[0], channels};
  for (size_t i = 0; i + 2 < x.size(); ++i) {
    const int64_t o = conv_out(x[i + 2], op.kernel[i], op.stride[i], op.dilation[i],
                               op.pad_begin[i], op.pad_end[i]);
    if (o < 1)
      fail("node ", node_label(node), ": the window (kernel ", op.kernel[i], ", dilation ",
           op.dilation[i], ") is larger than the padded input ", shape_str(x));
    out.push_back(o);
  }
  return out;
}

Shape integer_conv_window(const Node& node, const Shape& x, const Shape& w, OpDesc* op) {
  conv_groups(node, x, w, op);
  kernel_of_weight(node, w, op);
  resolve_window(node, x, WindowRules{false, false}, op);
  return window_output(node, x, w[0], *op);
}

}  // namespace jetplan::converter::ops
