// The DynamicQuantize family (DynamicQuantizeLinear): parameters and CPU twin
// (kernels/cpu/dynamic_quantize.cc). No CUDA kernel yet.
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
