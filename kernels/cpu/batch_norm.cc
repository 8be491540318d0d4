#include <cmath>

#include "kernels/batch_norm.h"

namespace jetplan::kernels::cpu {

// Evaluated in double straight from the formula and rounded to float once at the end, so the
// reference carries no error of its own worth speaking of (a folded scale/bias form would).
void batch_norm(const BatchNormParams& p, const float* x, const float* scale, const float* bias,
                const float* mean, const float* var, float* y) {
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + p.epsilon);
      // Element s of channel c: NCHW keeps a channel's elements together, NHWC interleaves them.
      const int64_t base = p.channels_last ? n * p.spatial * p.channels + c
                                           : (n * p.channels + c) * p.spatial;
      const int64_t step = p.channels_last ? p.channels : 1;
      for (int64_t s = 0; s < p.spatial; ++s) {
        const double v = scale[c] * (x[base + s * step] - static_cast<double>(mean[c])) * inv_std;
        y[base + s * step] = static_cast<float>(v + bias[c]);
      }
    }
}

}  // namespace jetplan::kernels::cpu
