// The Resize family (Resize, Upsample): parameters and CPU twin (kernels/cpu/resize.cc); CUDA
// kernels in kernels/cuda/resize.cu (coordinate math shared: kernels/resize_math.h). Float32 data,
// and Int8 in its input's scale for an INT8 plan's nearest and linear Resizes.
#pragma once

#include <cstdint>

#include "kernels/dense_index.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

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
  // y a part of a larger tensor (a Resize writing its share of a Concat in place): the dense
  // result's element i goes to y_index(p, i) (kernels/dense_index.h).
  JP_Y_BLOCK_FIELDS;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void resize(const ResizeParams& p, const float* x, float* y);

// Int8 x and y in one scale, nearest or linear, not tf_crop_and_resize (resize_math.h
// int8_tap_sum: the CUDA kernel's arithmetic, bit for bit).
void resize_int8(const ResizeParams& p, const int8_t* x, int8_t* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/resize.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_resize(X, F) \
  X(F, jp_resize_f16, kF16, 0) \
  X(F, jp_resize_f32, kF32, 0) \
  X(F, jp_resize_i8, kI8, 0) \
  X(F, jp_resize_pixels_f16, kF16, 0) \
  X(F, jp_resize_pixels_f32, kF32, 0) \
  X(F, jp_resize_pixels_i8, kI8, 0) \
  X(F, jp_resize_hw_f16, kF16, 0) \
  X(F, jp_resize_hw_f32, kF32, 0) \
  X(F, jp_resize_hw_i8, kI8, 0)
