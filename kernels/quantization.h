// The quantization arithmetic shared by the quantized CPU twins (QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv): rounding, saturation,
// int8/uint8 element access and the requantization of an int32 accumulator.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace jetplan::kernels::cpu {

// Rounds half to even whatever the floating-point rounding mode; NaN gives 0.
double round_half_even(double v);

// saturate(round_half_even(v) + zero_point) into qtype's range (kInt8 or kUInt8).
int32_t quantize_value(double v, int32_t zero_point, DType qtype);

// Element i of a quantized tensor (kInt8 or kUInt8: the only quantized types a validated plan
// holds), widened to int32.
inline int32_t load_quantized(DType t, const void* base, int64_t i) {
  return t == DType::kInt8 ? int32_t{static_cast<const int8_t*>(base)[i]}
                           : int32_t{static_cast<const uint8_t*>(base)[i]};
}

// Stores v (already saturated into t's range) as element i.
inline void store_quantized(DType t, void* base, int64_t i, int32_t v) {
  if (t == DType::kInt8)
    static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v);
  else
    static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v);
}

// ONNX accumulates in int32; the sum is taken exactly in int64 and reduced modulo 2^32 once,
// which gives the same bits as wrapping int32 additions without their undefined behaviour.
inline int32_t wrap_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// The requantization multiplier, in double, in ONNX's order of operations.
inline double multiplier(float in_scale, float w_scale, float out_scale) {
  return static_cast<double>(in_scale) * static_cast<double>(w_scale) /
         static_cast<double>(out_scale);
}

}  // namespace jetplan::kernels::cpu
