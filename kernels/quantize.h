// The Quantize family (QuantizeLinear); its params struct also serves Dequantize
// (kernels/dequantize.h). CPU twin: kernels/cpu/quantize.cc; CUDA kernels: kernels/cuda/quantize.cu
// (Float16 or Float32 x; the twin takes the same values as float32).
// Quantized tensors are DType::kInt8 or DType::kUInt8 (passed as void*, read as the params' DType);
// a zero point has its tensor's type and a scale is float32. Rounding is half to even and every
// conversion to a quantized type saturates (kernels/quantization.h).
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/quantization.h"

namespace jetplan::kernels {

// QuantizeLinear   y = saturate(round_half_even(x / scale) + zero_point)   x float32, y qtype
// DequantizeLinear y = (x - zero_point) * scale                            x qtype, y float32
// Both in float32 arithmetic, as ONNX's reference and onnxruntime compute them. x and y are
// [outer, channels, inner]; with per_channel, scale and zero_point have `channels` entries
// (ONNX per-axis: channels is dim[axis]), else one. A missing zero point is 0 (and then ONNX's
// y is uint8 unless output_dtype says otherwise: the converter sets qtype). NaN quantizes
// to zero_point (ONNX leaves it undefined); +-inf saturate.
struct QuantizeLinearParams {
  DType qtype = DType::kUInt8;
  int64_t outer = 1;
  int64_t channels = 1;
  int64_t inner = 1;
  bool per_channel = false;
  bool has_zero_point = false;
};

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
  X(F, jp_quantize_f32_u8, kF32, 0, kU8)
