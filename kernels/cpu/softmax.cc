#include <cmath>

#include "kernels/softmax.h"

namespace jetplan::kernels::cpu {

// Subtracting the row max keeps every exp in (0, 1], so no input overflows. The sum of exps runs
// in double along the axis in increasing order.
void softmax(const SoftmaxParams& p, const float* x, float* y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t in = 0; in < p.inner; ++in) {
      const float* xr = x + o * p.axis * p.inner + in;  // element j at xr[j * inner]
      float* yr = y + o * p.axis * p.inner + in;
      float max = xr[0];
      for (int64_t j = 1; j < p.axis; ++j)
        if (xr[j * p.inner] > max) max = xr[j * p.inner];
      if (p.masked_rows_zero && max == -INFINITY) {
        for (int64_t j = 0; j < p.axis; ++j) yr[j * p.inner] = p.log ? -INFINITY : 0.f;
        continue;
      }
      double sum = 0.0;
      for (int64_t j = 0; j < p.axis; ++j)
        sum += std::exp(static_cast<double>(xr[j * p.inner]) - max);
      const double log_sum = std::log(sum);
      for (int64_t j = 0; j < p.axis; ++j) {
        const double shifted = static_cast<double>(xr[j * p.inner]) - max;
        yr[j * p.inner] = static_cast<float>(p.log ? shifted - log_sum : std::exp(shifted) / sum);
      }
    }
}

}  // namespace jetplan::kernels::cpu
