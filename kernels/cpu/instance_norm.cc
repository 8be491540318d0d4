#include "kernels/instance_norm.h"

#include "kernels/cpu/moments.h"

namespace jetplan::kernels::cpu {

void instance_norm(const InstanceNormParams& p, const float* x, const float* scale,
                   const float* bias, float* y) {
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.channels; ++c) {
      const int64_t base = (n * p.channels + c) * p.spatial;
      const Moments m = moments(x + base, p.spatial, p.epsilon);
      for (int64_t s = 0; s < p.spatial; ++s)
        y[base + s] = normalize(m, x[base + s], scale[c], bias[c], p.act);
    }
}

}  // namespace jetplan::kernels::cpu
