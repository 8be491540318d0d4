// IEEE 754 binary16 ("half", ONNX float16) conversions in portable C++, for the CPU kernels, the
// converter (weights to fp16) and tests. A half is carried as its bit pattern in a uint16_t.
// Conversion to half rounds to nearest, ties to even, overflows to infinity and keeps
// subnormals; NaN stays NaN (quiet, with the top payload bits kept) and signs are kept,
// -0 included. Conversion from half is exact.
#pragma once

#include <cstdint>
#include <cstring>

namespace jetplan::kernels {

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity, or NaN with its payload
  } else if (exponent != 0) {
    bits = sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal: mantissa * 2^-24. Shift the leading one up to the implicit bit position; each
    // shift lowers the float exponent, which starts at that of 2^-14.
    uint32_t exponent32 = 127 - 14;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent32;
    }
    bits = sign | (exponent32 << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline double half_to_double(uint16_t h) { return static_cast<double>(half_to_float(h)); }

// One rounding from double; half_from_float goes through here because float -> double is exact,
// so a double or a float input is rounded to half exactly once.
inline uint16_t half_from_double(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
  const uint64_t magnitude = bits & 0x7fffffffffffffffull;
  if (magnitude >= 0x7ff0000000000000ull) {
    if (magnitude == 0x7ff0000000000000ull) return sign | 0x7c00u;                // infinity
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 42) & 0x3ffu));  // quiet NaN
  }
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;  // unbiased; d = m * 2^(e-52)
  if (exponent >= 16) return sign | 0x7c00u;  // >= 65536: past the largest half (65504)
  if (exponent < -25) return sign;  // below 2^-25, half the smallest subnormal: rounds to 0
  const uint64_t significand = (magnitude & 0xfffffffffffffull) | (1ull << 52);
  // Count the value in units of the half's last place: 2^(e-10) for a normal half, 2^-24 (the
  // subnormal spacing) below 2^-14.
  const bool normal = exponent >= -14;
  const int shift = (normal ? exponent - 10 : -24) - (exponent - 52);  // 42 .. 53
  uint64_t units = significand >> shift;
  const uint64_t rest = significand & ((1ull << shift) - 1);
  const uint64_t halfway = 1ull << (shift - 1);
  if (rest > halfway || (rest == halfway && (units & 1u))) ++units;
  // A normal value has units in [1024, 2048]; 2048 carries into the next exponent (and past
  // 65504 into the infinity pattern), which the sum below does by itself. A subnormal that
  // rounds up to 1024 becomes the smallest normal, 0x0400, also by itself.
  const uint64_t result =
      normal ? (static_cast<uint64_t>(exponent + 15) << 10) + units - 1024 : units;
  return static_cast<uint16_t>(sign | result);
}

inline uint16_t half_from_float(float f) { return half_from_double(static_cast<double>(f)); }

}  // namespace jetplan::kernels
