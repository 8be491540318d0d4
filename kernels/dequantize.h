// The Dequantize family (DequantizeLinear): it takes the Quantize family's params
// (QuantizeLinearParams, kernels/quantize.h). CPU twin: kernels/cpu/dequantize.cc; CUDA kernels:
// kernels/cuda/dequantize.cu (Int8 or UInt8 x to Float32, or to Float16 in GPU plans: the twin's
// float32 value rounded once).
#pragma once

#include "kernels/quantize.h"

namespace jetplan::kernels::cpu {

// x qtype -> y float32; zero_point may be null when !has_zero_point.
void dequantize_linear(const QuantizeLinearParams& p, const void* x, const float* scale,
                       const void* zero_point, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/dequantize.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_dequantize(X, F) \
  X(F, jp_dequantize_i8_f16, kI8, 0, kF16) \
  X(F, jp_dequantize_i8_f32, kI8, 0, kF32) \
  X(F, jp_dequantize_u8_f16, kU8, 0, kF16) \
  X(F, jp_dequantize_u8_f32, kU8, 0, kF32)
