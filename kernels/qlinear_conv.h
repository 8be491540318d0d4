// The QLinearConv family: parameters and CPU twin (kernels/cpu/qlinear_conv.cc); CUDA kernel in
// kernels/cuda/qlinear_conv.cu.
// Quantized tensors are DType::kInt8 or DType::kUInt8 (passed as void*, read as the params' DType);
// a zero point has its tensor's type and a scale is float32. Rounding is half to even and every
// conversion to a quantized type saturates (kernels/quantization.h).
#pragma once

#include "kernels/conv.h"
#include "kernels/dtype.h"

namespace jetplan::kernels {

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

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// Arguments in ONNX's input order (bias last, null when !p.conv.has_bias), then y.
void qlinear_conv(const QLinearConvParams& p, const void* x, const float* x_scale,
                  const void* x_zero_point, const void* w, const float* w_scale,
                  const void* w_zero_point, const float* y_scale, const void* y_zero_point,
                  const int32_t* bias, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/qlinear_conv.cu (columns: kernels/cuda/variants.h,
// JP_CUDA_VARIANT_COLUMNS): one thread per output element (NCHW, 1-D to 3-D, groups, pads,
// strides, dilations), the twin's exact integer sum and double requantization (bit for bit); the
// element types from the params (Int8 or UInt8 each). A direct convolution: ONNX Runtime's
// QOperator models run on the GPU, not at the INT8 igemm kernels' speed (explicit Q/DQ models
// take those).
#define JP_CUDA_VARIANTS_qlinear_conv(X, F) X(F, jp_qlinear_conv, kAny, 0)
