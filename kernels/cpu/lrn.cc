#include "kernels/lrn.h"

#include <cmath>

namespace jetplan::kernels::cpu {

// The square sum runs over the window's channels in increasing order, in double.
void lrn(const LrnParams& p, const float* x, float* y) {
  const int64_t before = (p.size - 1) / 2;
  const int64_t after = p.size - 1 - before;  // ceil((size - 1) / 2)
  const double alpha_over_size = static_cast<double>(p.alpha) / static_cast<double>(p.size);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const int64_t first = c - before < 0 ? 0 : c - before;
      const int64_t last = c + after >= p.channels ? p.channels - 1 : c + after;
      for (int64_t s = 0; s < p.spatial; ++s) {
        double sq = 0.0;
        for (int64_t k = first; k <= last; ++k) {
          const double v = x[(n * p.channels + k) * p.spatial + s];
          sq += v * v;
        }
        const int64_t i = (n * p.channels + c) * p.spatial + s;
        const double denom = std::pow(p.bias + alpha_over_size * sq, static_cast<double>(p.beta));
        y[i] = static_cast<float>(x[i] / denom);
      }
    }
}

}  // namespace jetplan::kernels::cpu
