// The DynamicQuantize family (DynamicQuantizeLinear): parameters and CPU twin
// (kernels/cpu/dynamic_quantize.cc); CUDA kernels in kernels/cuda/dynamic_quantize.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

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

namespace jetplan::kernels::cpu {

// y: count bytes; y_scale and y_zero_point: one element each.
void dynamic_quantize_linear(const DynamicQuantizeParams& p, const float* x, uint8_t* y,
                             float* y_scale, uint8_t* y_zero_point);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/dynamic_quantize.cu, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS): one block
// of 1024 threads (the range is a reduction over the whole tensor, then every element is
// quantized with it), x Float32 (a graph input, read as given) or Float16 (an activation of a GPU
// plan: its values, exactly, in float), y UInt8.
#define JP_CUDA_VARIANTS_dynamic_quantize(X, F) \
  X(F, jp_dynamic_quantize_f32, kF32, 1024, kU8) \
  X(F, jp_dynamic_quantize_f16, kF16, 1024, kU8)
