// The units the byte-moving kernels (Copy, Concat, Slice, Gather, Transpose) move: unsigned
// storage of 1 to 16 bytes, and the widest unit that pointers and sizes allow.
#pragma once

#include <cstdint>

namespace jetplan::kernels::cuda {

// Unsigned storage of N bytes (the unit a kernel moves).
template <int N> struct Unit;
template <> struct Unit<1> { using T = uint8_t; };
template <> struct Unit<2> { using T = uint16_t; };
template <> struct Unit<4> { using T = uint32_t; };
template <> struct Unit<8> { using T = uint2; };
template <> struct Unit<16> { using T = uint4; };

// The largest power of two up to 16 dividing every argument.
__device__ __forceinline__ int unit_bytes(uint64_t bits) {
  int u = 16;
  while (u > 1 && (bits & static_cast<uint64_t>(u - 1)) != 0) u >>= 1;
  return u;
}

}  // namespace jetplan::kernels::cuda
