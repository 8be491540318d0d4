// The order of floats that ArgMax/ArgMin and TopK rank by (the CPU twins and the CUDA ArgReduce): NaN above every
// number, as numpy sorts it, and all NaNs equal.
#pragma once

#include "kernels/host_device.h"

namespace jetplan::kernels::cpu {

// True when a ranks strictly above b for the largest-first order: NaN above every number, and
// equal elements (all NaNs are equal here) rank the same. Shared with the CUDA ArgReduce kernels
// (JP_HD), which must rank exactly as the twin; x != x is NaN on both sides.
JP_HD_INLINE bool ranks_above(float a, float b) {
  if (b != b) return false;
  return a != a || a > b;
}

JP_HD_INLINE bool same_rank(float a, float b) { return a == b || (a != a && b != b); }

// True when a ranks strictly below b for the smallest-first order of ArgMin: NaN is its
// extreme too (numpy's argmin), so a NaN b is never beaten and a NaN a beats every number.
JP_HD_INLINE bool ranks_below(float a, float b) {
  if (b != b) return false;
  return a != a || a < b;
}

}  // namespace jetplan::kernels::cpu
