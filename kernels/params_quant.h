// Parameter structs of the quantized kernels: ONNX QuantizeLinear, DequantizeLinear,
// QLinearMatMul and QLinearConv, as plain data fully resolved at plan load (see kernels/params.h).
// Quantized tensors are DType::kInt8 or DType::kUInt8; a zero point has its tensor's type and a
// scale is float32. Rounding is half to even and every conversion to a quantized type saturates.
#pragma once

#include <cstdint>

#include "kernels/params.h"

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

// For i in [0, batch): y[i] (M x N) = requantize(sum_k (A[i][m][k] - a_zp) * (B[i][k][n] - b_zp))
// A[i] is [M, K] row-major at a + i * a_batch_stride, B[i] is [K, N] at b + i * b_batch_stride
// (stride 0 broadcasts one matrix to every batch), y is [batch, M, N] dense. The sum is ONNX's
// int32 accumulator (it wraps modulo 2^32, as int32 arithmetic does). requantize of an
// accumulator for row m, column n is saturate(round_half_even(acc * multiplier) + y_zp) with
// multiplier = a_scale[m] * b_scale[n] / y_scale evaluated in double; a_scale and a_zp have M
// entries when a_per_row (else one), b_scale and b_zp N entries when b_per_column (else one).
struct QLinearMatMulParams {
  int64_t batch = 1;
  int64_t M = 0, N = 0, K = 0;
  int64_t a_batch_stride = 0;
  int64_t b_batch_stride = 0;
  DType a_type = DType::kUInt8;
  DType b_type = DType::kUInt8;
  DType y_type = DType::kUInt8;
  bool a_per_row = false;
  bool b_per_column = false;
};

// ONNX QLinearConv: `conv` gives the geometry exactly as for cpu::conv (layouts included);
// conv.has_bias says whether the int32 bias [out_channels] is present, and conv.has_residual
// and conv.act must be false and kNone (QLinearConv has no such epilogue; plan load refuses
// them). For output channel oc:
//   acc = sum (x - x_zp) * (w[oc] - w_zp[oc]) + bias[oc]          int32, wraps modulo 2^32
//   y   = saturate(round_half_even(acc * x_scale * w_scale[oc] / y_scale) + y_zp)
// with the multiplier x_scale * w_scale[oc] / y_scale evaluated in double. w_scale and w_zp
// have out_channels entries when w_per_channel, else one.
struct QLinearConvParams {
  ConvParams conv;
  DType x_type = DType::kUInt8;
  DType w_type = DType::kUInt8;
  DType y_type = DType::kUInt8;
  bool w_per_channel = false;
};

// ONNX DynamicQuantizeLinear (uint8), in float32 arithmetic as ONNX's reference:
//   lo = min(0, min x), hi = max(0, max x)
//   y_scale = (hi == lo ? 1 : hi - lo) / 255
//   y_zero_point = round_half_even(clamp(0 - lo / y_scale, 0, 255))
//   y = saturate(round_half_even(x / y_scale) + y_zero_point)
// NaN elements are left out of the range and quantize to y_zero_point.
struct DynamicQuantizeParams {
  int64_t count = 0;  // elements of x and y
};

}  // namespace jetplan::kernels
