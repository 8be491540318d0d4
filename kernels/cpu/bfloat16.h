// bfloat16 (ONNX BFLOAT16): the upper 16 bits of an IEEE 754 binary32, carried as its bit pattern
// in a uint16_t. For the CPU Cast kernel, the converter's constant folding, the runtime and tests.
//
// To bfloat16, float32 rounds to nearest, ties to even, as ONNX's reference implementation and
// its current node tests (test_cast_FLOAT_to_BFLOAT16 of onnx 1.13 and later), PyTorch, ml_dtypes
// and CUDA's __float2bfloat16_rn do. onnx 1.12's stored data (Debian's libonnx-testdata) was made
// by truncation instead, so there a value may be one bfloat16 step farther from zero than the
// stored one (tests/conformance accepts exactly that for that data set). Like any IEEE rounding
// to nearest, float32's largest finite values (past 0x7f7f8000) round to infinity. NaN stays NaN
// (quiet bit set, sign and the top payload bits kept: a NaN whose payload lies in the dropped
// bits alone would otherwise become infinity). Subnormals round like any other value. From
// bfloat16 to float32 is exact.
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
  // Adding just under half a step (0x7fff), plus one when the kept part is odd, carries into the
  // upper half exactly when the dropped half is past the tie, or at it with an odd upper half. A
  // carry out of the mantissa moves to the next binade (or to infinity), which is that rounding.
  const uint32_t odd = upper & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + odd) >> 16);
}

}  // namespace jetplan::kernels
