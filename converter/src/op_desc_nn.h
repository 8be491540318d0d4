// Attributes of the nn op families (see op_desc_groups.h). The window attributes of
// ConvTranspose (kernel, stride, dilation, pad_begin, pad_end, groups) and the normalizations'
// epsilon live in OpDesc itself, shared with Conv, Pool and BatchNorm.
#pragma once

#include <cstdint>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter {

struct NnDesc {
  // Reduce and ArgReduce with keepdims=0: the step writes output 0 in this shape (the reduced
  // dims kept, of extent 1) and expand_nn adds a Copy view into the ONNX output.
  bool keepdims_view = false;
  std::vector<int64_t> step_shape;

  // ConvTranspose. pad_begin may be negative where output_shape or auto_pad asks for more output
  // than the full transposed convolution gives (the ONNX reference's floor division).
  std::vector<int64_t> output_padding;
  bool has_bias = false;  // also LayerNorm's optional bias

  // Resize and Upsample: per dim of the input (see kernels/params_nn.h ResizeParams).
  fb::ResizeMode resize_mode = fb::ResizeMode::Nearest;
  fb::ResizeCoord coord = fb::ResizeCoord::HalfPixel;
  fb::ResizeNearest nearest = fb::ResizeNearest::RoundPreferFloor;
  std::vector<double> scale, resized_length, roi_start, roi_end;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.f;

  // Reduce: the op and the reduced axes (non-negative, ascending).
  fb::ReduceOp reduce_op = fb::ReduceOp::Sum;
  std::vector<int32_t> axes;

  // ArgReduce (OpDesc.axis is the axis, non-negative) and TopK (OpDesc.axis too).
  fb::ArgKind arg_kind = fb::ArgKind::Max;
  bool select_last_index = false;
  bool largest = true;

  // LayerNorm: OpDesc.axis (non-negative), which optional outputs the step writes.
  bool has_mean = false, has_inv_std_dev = false;

  // GroupNorm: OpDesc.groups; scale and bias per group (opset 18) rather than per channel.
  bool affine_per_group = false;

  // LRN.
  int64_t lrn_size = 1;
  float lrn_alpha = 1e-4f, lrn_beta = 0.75f, lrn_bias = 1.f;

  // NonMaxSuppression.
  int64_t max_output_per_class = 0;
  float iou_threshold = 0.f, score_threshold = 0.f;
  bool has_score_threshold = false, center_point_box = false;
};

}  // namespace jetplan::converter
