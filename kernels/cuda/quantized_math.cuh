// The quantized ops' arithmetic on the device (QLinearMatMul, QLinearConv), the same operations
// as their CPU twins' kernels/quantization.h: Int8 or UInt8 elements read and written as the
// params' DType says, the int32 accumulator's wrap, the requantization multiplier and value in
// double (IEEE on the device as on the host), round half to even (rint), NaN to 0, saturation.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace jetplan::kernels::cuda {

__device__ __forceinline__ int32_t load_q(DType t, const void* base, int64_t i) {
  return t == DType::kInt8 ? int32_t{static_cast<const int8_t*>(base)[i]}
                           : int32_t{static_cast<const uint8_t*>(base)[i]};
}

__device__ __forceinline__ void store_q(DType t, void* base, int64_t i, int32_t v) {
  if (t == DType::kInt8)
    static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v);
  else
    static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v);
}

// saturate(round_half_even(acc * mult) + zp) into t's range, as cpu::quantize_value.
__device__ __forceinline__ int32_t requantize_q(int64_t acc, double mult, int32_t zp, DType t) {
  const int32_t wrapped = static_cast<int32_t>(static_cast<uint32_t>(acc));
  const double v = static_cast<double>(wrapped) * mult;
  const double r = v != v ? 0.0 : rint(v);
  const double lo = t == DType::kInt8 ? -128.0 : 0.0, hi = t == DType::kInt8 ? 127.0 : 255.0;
  const double q = r + zp;
  return static_cast<int32_t>(q < lo ? lo : (q > hi ? hi : q));
}

__device__ __forceinline__ double multiplier_q(float in_scale, float w_scale, float out_scale) {
  return __ddiv_rn(__dmul_rn(static_cast<double>(in_scale), static_cast<double>(w_scale)),
                   static_cast<double>(out_scale));
}

}  // namespace jetplan::kernels::cuda
