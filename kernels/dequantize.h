// The Dequantize family (DequantizeLinear): it takes the Quantize family's params
// (QuantizeLinearParams, kernels/quantize.h). CPU twin: kernels/cpu/dequantize.cc. No CUDA
// kernel yet.
#pragma once

#include "kernels/quantize.h"

namespace jetplan::kernels::cpu {

// x qtype -> y float32; zero_point may be null when !has_zero_point.
void dequantize_linear(const QuantizeLinearParams& p, const void* x, const float* scale,
                       const void* zero_point, float* y);

}  // namespace jetplan::kernels::cpu
