// The window geometry of the convolutions (Conv, QLinearConv, ConvInteger: resolve_window with
// the kernel of the weight), of Pool (the kernel_shape attribute) and the parts ConvTranspose
// shares: kernel, strides, dilations and pads or auto_pad (SAME_UPPER, SAME_LOWER, VALID,
// NOTSET) resolved into OpDesc's explicit per-dim fields, and the output extents. ConvertError,
// naming the node, where the attributes contradict the input.
#pragma once

#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
// The auto_pad attribute; ConvertError for an unknown one.
AutoPad auto_pad_of(const Node& node);

// "" for an input of 1 to 3 spatial dims (rank 3 to 5), else the reason.
std::string spatial_rank_reason(const Shape& x);
// ConvertError unless the weight has the input's rank.
void check_weight_rank(const Node& node, const Shape& x, const Shape& w);
// op->kernel from the weight's spatial dims; ConvertError when a kernel_shape attribute differs.
void kernel_of_weight(const Node& node, const Shape& w, OpDesc* op);
// op->groups from the group attribute; ConvertError unless it splits input x's channels
// (w[1] per group) and the weight's output channels.
void conv_groups(const Node& node, const Shape& x, const Shape& w, OpDesc* op);

// How resolve_window checks op->kernel (which the caller set) with the strides and dilations.
struct WindowRules {
  // Names the attributes whose entry count is checked in the message: "kernel_shape, strides
  // and dilations" or "strides and dilations" (checked: kernel too, or not).
  bool check_kernel_count = true;
  // The kernel's extents must be at least 1 (else only at most 2^31).
  bool kernel_at_least_one = true;
};
// Strides, dilations and explicit pads (from pads or auto_pad) for input x into op.
void resolve_window(const Node& node, const Shape& x, const WindowRules& rules, OpDesc* op);
// [x[0], channels, spatial extents of the window over the padded input]; ConvertError where the
// window is larger than the padded input.
Shape window_output(const Node& node, const Shape& x, int64_t channels, const OpDesc& op);

// The window of QLinearConv and ConvInteger (as Conv's, with the kernel of the weight): groups,
// kernel, strides, dilations, pads or auto_pad, and the output shape.
Shape integer_conv_window(const Node& node, const Shape& x, const Shape& w, OpDesc* op);

}  // namespace jetplan::converter::ops
