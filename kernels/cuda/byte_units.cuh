// The units the byte-moving kernels (Copy, Concat, Slice, Gather, Transpose) move: unsigned
// storage of 1 to 16 bytes, and the widest unit that pointers and sizes allow.
#pragma once

#include <cstdint>
#include <type_traits>

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

// Calls move(std::integral_constant<int, N>{}, bytes / N) for the unit N = unit_bytes(bits): a
// byte mover's dispatch to its widest unit.
template <typename Move>
__device__ __forceinline__ void move_in_units(uint64_t bits, int64_t bytes, Move move) {
  switch (unit_bytes(bits)) {
    case 16: move(std::integral_constant<int, 16>{}, bytes / 16); break;
    case 8: move(std::integral_constant<int, 8>{}, bytes / 8); break;
    case 4: move(std::integral_constant<int, 4>{}, bytes / 4); break;
    case 2: move(std::integral_constant<int, 2>{}, bytes / 2); break;
    default: move(std::integral_constant<int, 1>{}, bytes); break;
  }
}

}  // namespace jetplan::kernels::cuda
