// bfloat16 (ONNX BFLOAT16): the upper 16 bits of an IEEE 754 binary32, carried as its bit pattern
// in a uint16_t. For the CPU Cast kernel, the converter's constant folding, the runtime and tests.
//
// To bfloat16, float32 is truncated: its low 16 bits are dropped, which rounds toward zero. That
// is what ONNX's conformance data for Cast and CastLike (libonnx-testdata, onnx 1.12:
// test_cast_FLOAT_to_BFLOAT16 stores the upper halves of the inputs) and onnx's reference before
// it moved to ml_dtypes expect; PyTorch, ml_dtypes and CUDA's __float2bfloat16 round to nearest
// even instead, so a value may come out one bfloat16 step (2^-7 relative) nearer zero than
// theirs. Truncation never overflows: float32's largest finite values stay finite. NaN stays NaN
// (quiet bit set, sign and the top payload bits kept: a NaN whose payload lies in the dropped bits
// alone would otherwise become infinity). Signs, zeros, infinities and subnormals truncate like
// any other value. From bfloat16 to float32 is exact.
#pragma once

#include <cstdint>
#include <cstring>

namespace jetplan::kernels {

inline float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t bfloat16_from_float(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const auto upper = static_cast<uint16_t>(bits >> 16);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return upper | 0x0040u;  // NaN: quiet, stays NaN
  return upper;
}

}  // namespace jetplan::kernels
