#include "kernels/layer_norm.h"

#include "kernels/cpu/moments.h"
#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cpu {

void layer_norm(const LayerNormParams& p, const float* x, const float* scale, const float* bias,
                float* y, float* mean, float* inv_std_dev) {
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* xr = x + o * p.inner;
    const Moments m = moments(xr, p.inner, p.epsilon, p.rms);
    for (int64_t i = 0; i < p.inner; ++i)
      y[o * p.inner + i] = normalize(m, xr[i], scale[i], p.has_bias ? bias[i] : 0.0, p.act);
    if (mean) mean[o] = static_cast<float>(m.mean);
    if (inv_std_dev) inv_std_dev[o] = static_cast<float>(m.inv_std);
  }
}

void layer_norm_to_int8(const LayerNormParams& p, const float* x, const float* scale,
                        const float* bias, float inv_y, int8_t* y) {
  for (int64_t o = 0; o < p.outer; ++o) {
    const float* xr = x + o * p.inner;
    const Moments m = moments(xr, p.inner, p.epsilon, p.rms);
    for (int64_t i = 0; i < p.inner; ++i) {
      const float v = normalize(m, xr[i], scale[i], p.has_bias ? bias[i] : 0.0, p.act);
      y[o * p.inner + i] = int8_quantize(v, inv_y);
    }
  }
}

}  // namespace jetplan::kernels::cpu
