// Parameter structs of the "nn" op batch: Resize, Reduce, ArgMax/ArgMin, TopK, the
// normalizations (Instance, Layer, Group, LRN), ConvTranspose and NonMaxSuppression. Same
// contract as params.h: plain data, fully resolved at plan load (the converter turns ONNX
// attributes and constant inputs into these fields), dense row-major tensors, float32 data unless
// a field says otherwise, no pointers.
#pragma once

#include <cstdint>

#include "kernels/params.h"

namespace jetplan::kernels {

// ------------------------------------------------------------------------------------ Resize

enum class ResizeMode : uint8_t { kNearest = 0, kLinear = 1, kCubic = 2 };
constexpr int kResizeModeCount = 3;

// How output coordinate x of a dim maps to the input coordinate c (ONNX
// coordinate_transformation_mode). in is the dim's input length, s its scale and L its
// resized_length.
enum class ResizeCoord : uint8_t {
  kHalfPixel = 0,         // c = (x + 0.5) / s - 0.5
  kPytorchHalfPixel = 1,  // L > 1 ? (x + 0.5) / s - 0.5 : 0
  kAlignCorners = 2,      // L > 1 ? x * (in - 1) / (L - 1) : 0
  kAsymmetric = 3,        // c = x / s
  kTfCropAndResize = 4,   // L > 1 ? x * (end - start) * (in - 1) / (L - 1) + start * (in - 1)
                          //       : (end - start) * (in - 1) / 2 + start * (in - 1); outside
                          // [0, in - 1] the whole output element is extrapolation_value
  kTfHalfPixelForNn = 5,  // c = (x + 0.5) / s (opset 11 only)
};
constexpr int kResizeCoordCount = 6;

// How nearest mode rounds c (ONNX nearest_mode); the index is then clamped to [0, in - 1].
enum class ResizeNearest : uint8_t {
  kRoundPreferFloor = 0,  // halves go down
  kRoundPreferCeil = 1,   // halves go up
  kFloor = 2,
  kCeil = 3,
};
constexpr int kResizeNearestCount = 4;

// x [in_dims], y [out_dims], both of `rank` dims; every dim runs through the same formula, so the
// batch and channel dims simply have in == out and scale 1 (roi 0..1 for tf_crop_and_resize).
// Linear and cubic are separable over all dims: each output is a sum over the tap product of
// per-dim 1D weights. Input indices outside [0, in - 1] read the edge element ('edge' padding);
// with exclude_outside, cubic instead gives those taps weight 0 and renormalizes. A tap of
// weight exactly 0 is not read, so an output that falls on an input sample equals it even next
// to an infinity.
//
// scale: ONNX's scale of the dim. The converter stores the float `scales` input widened to
// double, or out / in computed in double when `sizes` is given (with axes and
// keep_aspect_ratio_policy already resolved into out_dims and scale). Double because nearest
// rounding at exact halves depends on it (float 0.6f and double 0.6 pick different pixels).
// resized_length: ONNX's length_resized, which the ONNX reference and its test data take as
// in * scale, a fraction when `scales` is given (4 * 0.6 = 2.4 although out is 2: onnx/onnx
// issue 2462 calls this intended), and which is exactly out when `sizes` is given. The converter
// stores out, or in * scale computed in double; the kernel never recomputes it, so a product
// that rounds cannot move an align_corners coordinate off an exact half.
// roi_start/roi_end: the normalized roi of the dim, read only by kTfCropAndResize.
// Antialias (opset 18) is not supported: the converter refuses antialias=1. Upsample (opset 7-9)
// maps to nearest + kAsymmetric + kFloor, or linear + kAsymmetric.
struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  int32_t rank = 0;  // 1..kMaxRank
  int64_t in_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  double scale[kMaxRank] = {1, 1, 1, 1, 1, 1, 1, 1};
  double resized_length[kMaxRank] = {};
  double roi_start[kMaxRank] = {};
  double roi_end[kMaxRank] = {1, 1, 1, 1, 1, 1, 1, 1};
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.f;
};

// ------------------------------------------------------------------------------------ Reduce

enum class ReduceOp : uint8_t {
  kSum = 0,
  kMean = 1,
  kMax = 2,        // NaN propagates
  kMin = 3,        // NaN propagates
  kProd = 4,
  kL1 = 5,         // sum |x|
  kL2 = 6,         // sqrt(sum x^2)
  kSumSquare = 7,  // sum x^2
  kLogSum = 8,     // log(sum x)
  kLogSumExp = 9,  // max + log(sum exp(x - max))
};
constexpr int kReduceOpCount = 10;

// x [in_dims] (rank dims); bit d of axis_mask set reduces dim d. y is [in_dims] with every
// reduced dim set to 1 (keepdims=0 drops those dims from the shape, not from the bytes). A mask of
// 0 applies the op to each element alone (Sum copies, L2 gives |x|); ONNX's noop_with_empty_axes
// is an Identity, which the converter emits as a copy instead. An empty reduced set gives the
// op's identity: Sum 0, Prod 1, Max -inf, Min +inf, LogSum and LogSumExp -inf, Mean NaN.
struct ReduceParams {
  ReduceOp op = ReduceOp::kSum;
  int32_t rank = 0;  // 0..kMaxRank
  int64_t in_dims[kMaxRank] = {};
  uint32_t axis_mask = 0;
};

// ------------------------------------------------------------------------ ArgMax, ArgMin, TopK

enum class ArgKind : uint8_t { kMax = 0, kMin = 1 };

// x [outer, axis, inner] -> y int64 [outer, inner]: the index along the axis of the largest (or
// smallest) element; equal elements give the first index, or the last with select_last_index.
// NaN counts as the extreme for both kinds, as numpy's argmax/argmin do. axis >= 1.
struct ArgReduceParams {
  ArgKind kind = ArgKind::kMax;
  bool select_last_index = false;
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
};

// x [outer, axis, inner] -> values float [outer, k, inner] and indices int64 [outer, k, inner]:
// the k largest (or smallest) elements along the axis, in order, ties by lower index first. NaN
// ranks above every number (first when largest, last when smallest), as numpy sorts it. The
// output is always sorted, which ONNX's sorted=0 (any order) also allows. 0 <= k <= axis.
struct TopKParams {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
  int64_t k = 1;
  bool largest = true;
};

// ----------------------------------------------------------------------------- normalizations
// Statistics are the population mean and variance (divide by the count), in double, two passes
// in increasing index order; y = act(scale * (x - mean) / sqrt(var + epsilon) + bias).

// x and y [batch, channels, spatial]; statistics per (n, c); scale and bias [channels].
struct InstanceNormParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  float epsilon = 1e-5f;
  Activation act;
};

// x and y [outer, inner], inner the product of dims [axis, rank); statistics per row; scale and
// bias [inner] (a scale that ONNX broadcasts to the normalized shape is expanded by the converter).
// The optional outputs mean and inv_std_dev are [outer] (ONNX shape [d0 .. d(axis-1), 1, .., 1]).
struct LayerNormParams {
  int64_t outer = 1;
  int64_t inner = 0;
  float epsilon = 1e-5f;
  bool has_bias = false;
  Activation act;
};

// x and y [batch, channels, spatial]; statistics per (n, group) over channels/groups channels;
// scale and bias [channels] (opset 21), or [groups] with affine_per_group (opset 18).
struct GroupNormParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  int64_t groups = 1;
  float epsilon = 1e-5f;
  bool affine_per_group = false;
  Activation act;
};

// x and y [batch, channels, spatial]; y = x / (bias + alpha / size * sq)^beta with sq the sum of
// x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist.
struct LrnParams {
  int64_t batch = 1;
  int64_t channels = 0;
  int64_t spatial = 1;
  int64_t size = 1;
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.f;
};

// ----------------------------------------------------------------------------- ConvTranspose

// y = act(convT(x, w) + bias + residual), the adjoint of ConvParams' convolution:
// x [batch, in_channels, *in_size], w [in_channels, out_channels / groups, *kernel],
// bias [out_channels] (optional), residual and y [batch, out_channels, *out_size], and
// y[n, oc, o] sums x[n, ic, i] * w[ic, oc % (out_channels / groups), k] over the input channels ic
// of oc's group and every (i, k) with o = i * stride - pad_begin + k * dilation.
// out_size is explicit (ONNX output_shape, or stride * (in - 1) + output_padding +
// (kernel - 1) * dilation + 1 - pad_begin - pad_end): pad_end and output_padding are implied by it.
struct ConvTransposeParams {
  int32_t spatial_rank = 2;  // 1..kMaxSpatial
  int64_t batch = 1;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  int64_t groups = 1;
  int64_t in_size[kMaxSpatial] = {1, 1, 1};
  int64_t out_size[kMaxSpatial] = {1, 1, 1};
  int64_t kernel[kMaxSpatial] = {1, 1, 1};
  int64_t stride[kMaxSpatial] = {1, 1, 1};
  int64_t dilation[kMaxSpatial] = {1, 1, 1};
  int64_t pad_begin[kMaxSpatial] = {0, 0, 0};
  bool has_bias = false;
  bool has_residual = false;
  Activation act;
};

// ------------------------------------------------------------------------- NonMaxSuppression

// boxes [batch, num_boxes, 4] as [y1, x1, y2, x2] (any two opposite corners) or, with
// center_point_box, [x_center, y_center, width, height]; scores [batch, num_classes, num_boxes].
// Per (batch, class): boxes whose score is > score_threshold (every box without
// has_score_threshold; a NaN score never) taken by score descending, ties by lower box index;
// a box is kept unless its IoU with a box already kept for this (batch, class) is
// > iou_threshold; at most max_output_per_class kept (negative counts as 0).
// Output selected: int64 [nms_capacity(p), 3] rows (batch, class, box), in (batch, class,
// selection) order; the number of rows is known only at run time: the kernel returns it (and
// writes it to a count word), rows past it are -1. max_output_per_class, iou_threshold and
// score_threshold are ONNX inputs: plan load requires them constant.
struct NmsParams {
  int64_t batch = 1;
  int64_t num_classes = 1;
  int64_t num_boxes = 0;
  int64_t max_output_per_class = 0;
  float iou_threshold = 0.f;
  float score_threshold = 0.f;
  bool has_score_threshold = false;
  bool center_point_box = false;
};

// Rows of the selected output: every (batch, class) can keep min(num_boxes, max_output_per_class).
constexpr int64_t nms_capacity(const NmsParams& p) {
  const int64_t per_class = p.max_output_per_class < 0 ? 0
                            : p.max_output_per_class < p.num_boxes ? p.max_output_per_class
                                                                   : p.num_boxes;
  return p.batch * p.num_classes * per_class;
}

}  // namespace jetplan::kernels
