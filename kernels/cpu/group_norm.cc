#include "kernels/group_norm.h"

#include "kernels/cpu/moments.h"

namespace jetplan::kernels::cpu {

// A group's channels are contiguous in memory, so its statistics run over one span.
void group_norm(const GroupNormParams& p, const float* x, const float* scale, const float* bias,
                float* y) {
  const int64_t per_group = p.channels / p.groups;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t base = (n * p.channels + g * per_group) * p.spatial;
      const Moments m = moments(x + base, per_group * p.spatial, p.epsilon);
      for (int64_t cg = 0; cg < per_group; ++cg) {
        const int64_t c = g * per_group + cg;
        const int64_t affine = p.affine_per_group ? g : c;
        for (int64_t s = 0; s < p.spatial; ++s) {
          const int64_t i = base + cg * p.spatial + s;
          y[i] = normalize(m, x[i], scale[affine], bias[affine], p.act);
        }
      }
    }
}

}  // namespace jetplan::kernels::cpu
