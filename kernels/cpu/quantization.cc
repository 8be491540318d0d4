#include "kernels/quantization.h"

#include <cmath>

namespace jetplan::kernels::cpu {

double round_half_even(double v) {
  if (std::isnan(v)) return 0.0;
  // v - trunc(v) is exact (Sterbenz for |v| >= 1, trunc(v) = 0 below), so a tie is a true tie;
  // v / 2 is exact too, and round(v / 2) picks the even neighbour of a tie.
  if (std::fabs(v - std::trunc(v)) == 0.5) return 2.0 * std::round(v / 2.0);
  return std::round(v);
}

int32_t quantize_value(double v, int32_t zero_point, DType qtype) {
  const double lo = qtype == DType::kInt8 ? -128.0 : 0.0;
  const double hi = qtype == DType::kInt8 ? 127.0 : 255.0;
  // Sum and clamp in double: infinities and huge values saturate instead of overflowing int32.
  const double q = round_half_even(v) + zero_point;
  return static_cast<int32_t>(q < lo ? lo : (q > hi ? hi : q));
}

}  // namespace jetplan::kernels::cpu
