// The order of floats that ArgMax/ArgMin and TopK rank by (the CPU twins): NaN above every
// number, as numpy sorts it, and all NaNs equal.
#pragma once

#include <cmath>

namespace jetplan::kernels::cpu {

// True when a ranks strictly above b for the largest-first order: NaN above every number, and
// equal elements (all NaNs are equal here) rank the same.
inline bool ranks_above(float a, float b) {
  if (std::isnan(b)) return false;
  return std::isnan(a) || a > b;
}

inline bool same_rank(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace jetplan::kernels::cpu
