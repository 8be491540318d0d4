#include "kernels/activation.h"
#include "kernels/conv.h"
#include "kernels/conv_geometry.h"

namespace jetplan::kernels::cpu {

// Accumulates in double, in the order (input channel, kd, kh, kw), then adds the bias, rounds to
// float once and adds the residual: the reference error stays far below that of any GPU kernel
// checked against it. channels_last only changes where each element lives (NHWC tensors,
// [Cout, *kernel, Cin / groups] weights), not the summation order.
void conv(const ConvParams& p, const float* x, const float* w, const float* bias,
          const float* residual, float* y) {
  const ConvGeometry g = conv_geometry_3d(p);
  const ConvVolumes vol = conv_volumes(p, g);
  const bool cl = p.channels_last;
  // Element offsets of x[n, c, spatial], w[oc, ic, k] and y[n, oc, spatial] in either layout.
  auto x_at = [&](int64_t n, int64_t c, int64_t s) {
    return cl ? (n * vol.in_plane + s) * p.in_channels + c
              : (n * p.in_channels + c) * vol.in_plane + s;
  };
  auto w_at = [&](int64_t oc, int64_t ic, int64_t k) {
    return cl ? (oc * vol.kernel_volume + k) * vol.in_per_group + ic
              : (oc * vol.in_per_group + ic) * vol.kernel_volume + k;
  };
  const int64_t y_channels = p.y_channels > 0 ? p.y_channels : p.out_channels;
  auto y_at = [&](int64_t n, int64_t oc, int64_t s) {
    return cl ? (n * vol.out_plane + s) * y_channels + p.y_channel_offset + oc
              : (n * p.out_channels + oc) * vol.out_plane + s;
  };

  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t first_ic = (oc / vol.out_per_group) * vol.in_per_group;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double acc = 0.0;
            for (int64_t ic = 0; ic < vol.in_per_group; ++ic) {
              for_each_tap(g, o0, o1, o2, [&](int64_t s, int64_t k) {
                const double xv = x[x_at(n, first_ic + ic, s)];
                const double wv = w[w_at(oc, ic, k)];
                acc += xv * wv;
              });
            }
            if (p.has_bias) acc += bias[oc];
            const int64_t yi = y_at(n, oc, (o0 * g.out[1] + o1) * g.out[2] + o2);
            float v = static_cast<float>(acc);
            if (p.has_residual) v += residual[yi];  // no residual with a channel slice of y
            y[yi] = apply_activation(p.act, v);
          }
    }
  }
}

}  // namespace jetplan::kernels::cpu
