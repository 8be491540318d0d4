// The Quantize family (QuantizeLinear); its params struct also serves Dequantize
// (kernels/dequantize.h). CPU twin: kernels/cpu/quantize.cc; CUDA kernels: kernels/cuda/quantize.cu
// (Float16 or Float32 x; the twin takes the same values as float32).
// Quantized tensors are DType::kInt8 or DType::kUInt8 (passed as void*, read as the params' DType);
// a zero point has its tensor's type and a scale is float32. Rounding is half to even and every
// conversion to a quantized type saturates (kernels/quantization.h).
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/host_device.h"
#include "kernels/quantization.h"

namespace jetplan::kernels {

// QuantizeLinear   y = saturate(round_half_even(x / scale) + zero_point)   x float32, y qtype
// DequantizeLinear y = (x - zero_point) * scale                            x qtype, y float32
// Both in float32 arithmetic, as ONNX's reference and onnxruntime compute them. x and y are
// [outer, channels, inner]; with per_channel, scale and zero_point have `channels` entries
// (ONNX per-axis: channels is dim[axis]), else one. A missing zero point is 0 (and then ONNX's
// y is uint8 unless output_dtype says otherwise: the converter sets qtype). NaN quantizes
// to zero_point (ONNX leaves it undefined); +-inf saturate.
//
// The image form (QuantizeLinear only, per tensor; the plan's QuantizeLayout): x [N, H, W, C]
// (kNhwcPadded) or [N, C, H, W] (kNchwToNhwcPadded) into y [N, H, W, padded_channels], the
// channels from C on the zero point: outer = N, channels = C, inner = H * W. An INT8 plan's RGB
// input becomes the 8-channel NHWC tensor its stem conv reads, in one pass.
enum class QuantizeLayout : uint8_t { kSame = 0, kNhwcPadded = 1, kNchwToNhwcPadded = 2 };

struct QuantizeLinearParams {
  DType qtype = DType::kUInt8;
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
  bool per_channel = false;
  bool has_zero_point = false;
  QuantizeLayout layout = QuantizeLayout::kSame;
  int64_t padded_channels = 0;  // the image form's C' (>= channels)
};

// The element of x that the image form's output (pixel, c) quantizes, c < p.channels; pixel
// runs over N * H * W.
JP_HD_INLINE int64_t quantize_image_source(const QuantizeLinearParams& p, int64_t pixel, int64_t c) {
  if (p.layout == QuantizeLayout::kNhwcPadded) return pixel * p.channels + c;
  const int64_t n = pixel / p.inner, hw = pixel - n * p.inner;
  return (n * p.channels + c) * p.inner + hw;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// x float32 -> y qtype; zero_point may be null when !has_zero_point.
void quantize_linear(const QuantizeLinearParams& p, const float* x, const float* scale,
                     const void* zero_point, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/quantize.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_quantize(X, F) \
  X(F, jp_quantize_f16_i8, kF16, 0, kI8) \
  X(F, jp_quantize_f32_i8, kF32, 0, kI8) \
  X(F, jp_quantize_f16_u8, kF16, 0, kU8) \
  X(F, jp_quantize_f32_u8, kF32, 0, kU8) \
  X(F, jp_quantize_image_f16_i8, kF16, 0, kI8) \
  X(F, jp_quantize_image_f32_i8, kF32, 0, kI8)
