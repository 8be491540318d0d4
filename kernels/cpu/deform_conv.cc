#include "kernels/deform_conv.h"

namespace jetplan::kernels::cpu {

// Each output pixel's samples are taken once, in K order, and added into y of every output
// channel of the group (y holds the running sums: allocation-free), then the bias.
void deform_conv(const DeformConvParams& p, const float* x, const float* w, const float* offset,
                 const float* bias, const float* mask, float* y) {
  const float* tensors[3] = {x, offset, mask};
  const auto load = [&](int which, int64_t i) { return tensors[which][i]; };
  const int64_t K = deform_conv_k(p), cout_g = p.out_channels / p.groups;
  const int64_t plane = p.out_h * p.out_w;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g)
      for (int64_t oh = 0; oh < p.out_h; ++oh)
        for (int64_t ow = 0; ow < p.out_w; ++ow) {
          float* out = y + (n * p.out_channels + g * cout_g) * plane + oh * p.out_w + ow;
          for (int64_t o = 0; o < cout_g; ++o) out[o * plane] = 0.f;
          for (int64_t k = 0; k < K; ++k) {
            const float a = deform_conv_sample(p, load, n, oh, ow, deform_conv_tap(p, g, k));
            for (int64_t o = 0; o < cout_g; ++o) out[o * plane] += a * w[(g * cout_g + o) * K + k];
          }
          if (p.has_bias)
            for (int64_t o = 0; o < cout_g; ++o) out[o * plane] += bias[g * cout_g + o];
        }
}

}  // namespace jetplan::kernels::cpu
