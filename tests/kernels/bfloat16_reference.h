// bfloat16 computed another way than kernels/cpu/bfloat16.h, for the Cast tests: values decoded
// with ldexp from the fields, and float32 rounded to nearest even by scaling the value to the
// bfloat16's last place and rounding that to an integer (std::rint in the default rounding mode,
// ties to even), not by adding to its bits. The decoder
// takes any field widths: the Cast and Elementwise tests read half through it too.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels::test_util {

// A binary floating-point value of 1 sign, exp_bits exponent and mant_bits mantissa bits (bias
// 2^(exp_bits-1) - 1, subnormals m * 2^(1 - bias - mant_bits)), decoded with ldexp from the
// fields: bfloat16 here, half in the Cast tests.
inline long double ieee_value(uint32_t b, int exp_bits, int mant_bits) {
  const int e_max = (1 << exp_bits) - 1, bias = e_max / 2;
  const int e = static_cast<int>(b >> mant_bits) & e_max;
  const uint32_t m = b & ((1u << mant_bits) - 1);
  long double mag;
  if (e == e_max)
    mag = m ? std::numeric_limits<long double>::quiet_NaN()
            : std::numeric_limits<long double>::infinity();
  else if (e == 0)
    mag = std::ldexp(static_cast<long double>(m), 1 - bias - mant_bits);
  else
    mag = std::ldexp(static_cast<long double>(m + (1u << mant_bits)), e - bias - mant_bits);
  return ((b >> (exp_bits + mant_bits)) & 1u) ? -mag : mag;
}

// 1 sign, 8 exponent (bias 127), 7 mantissa bits; subnormals are m * 2^-133.
inline long double bfloat16_value(uint16_t b) { return ieee_value(b, 8, 7); }

// The bfloat16 nearest to f (f not NaN), ties to the even encoding: |f| in units of its last
// bfloat16 place (2^(e - 8) for |f| in [2^(e-1), 2^e), at least the subnormal spacing 2^-133),
// rounded to an integer. The unit count's parity is the encoding's last bit, so ties to an even
// count are ties to even; a count of 256 is the next binade's first value (or infinity).
inline uint16_t bfloat16_rounded(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const long double a = std::fabs(static_cast<long double>(f));
  if (std::isinf(a)) return sign | 0x7f80;
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);
  const int last_place = e - 8 > -133 ? e - 8 : -133;
  const long double q = std::rint(std::ldexp(a, -last_place));  // 0 .. 256
  const long double v = std::ldexp(q, last_place);                // a bfloat16 value, exactly
  if (v >= std::ldexp(1.0L, 128)) return sign | 0x7f80;           // past float's range
  // v is a float32 with 16 zero low bits: its upper half is the encoding. Checked by decoding.
  const auto b = static_cast<uint16_t>(sign | (bits_of_float(static_cast<float>(v)) >> 16));
  return bfloat16_value(b) == (sign ? -v : v) ? b : uint16_t{0x7fff};  // 0x7fff: a NaN, fails
}

}  // namespace jetplan::kernels::test_util
