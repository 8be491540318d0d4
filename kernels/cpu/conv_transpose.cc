#include "kernels/activation.h"
#include "kernels/conv_transpose.h"
#include "kernels/conv_transpose_math.h"

namespace jetplan::kernels::cpu {

using conv_transpose_math::Geometry;
using conv_transpose_math::for_each_source_tap;
using conv_transpose_math::to_3d;

namespace {

// channels_last (the upsampling form only, conv_transpose_upsamples; prepare checks it): each
// output (n, oy, ox, oc) takes the one tap (oy % KH, ox % KW) of input pixel (oy / KH, ox / KW);
// the same sum order and epilogue as the NCHW gather below; y's pixels y_channels apart when the
// step writes a Concat's channel slice (the residual dense).
void conv_transpose_upsample_nhwc(const ConvTransposeParams& p, const float* x, const float* w,
                                  const float* bias, const float* residual, float* y) {
  if (!conv_transpose_upsamples(p)) return;
  const int64_t kh = p.kernel[0], kw = p.kernel[1], cin = p.in_channels, cout = p.out_channels;
  const int64_t ih = p.in_size[0], iw = p.in_size[1], oh = p.out_size[0], ow = p.out_size[1];
  const int64_t ldy = p.y_channels != 0 ? p.y_channels : cout;
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        const float* xp = x + ((n * ih + oy / kh) * iw + ox / kw) * cin;
        const float* wt = w + ((oy % kh) * kw + ox % kw) * cout * cin;
        for (int64_t oc = 0; oc < cout; ++oc) {
          double acc = 0.0;
          for (int64_t ic = 0; ic < cin; ++ic)
            acc += static_cast<double>(xp[ic]) * static_cast<double>(wt[oc * cin + ic]);
          if (p.has_bias) acc += bias[oc];
          const int64_t pixel = (n * oh + oy) * ow + ox;
          float v = static_cast<float>(acc);
          if (p.has_residual) v += residual[pixel * cout + oc];
          y[pixel * ldy + p.y_channel_offset + oc] = apply_activation(p.act, v);
        }
      }
}

}  // namespace

// Written as a gather, one output at a time, so each output has a fixed summation order (input
// channel, k0, k1, k2) in double and no two outputs share an accumulator; then the bias, one
// rounding to float, the residual and the activation, as conv does.
void conv_transpose(const ConvTransposeParams& p, const float* x, const float* w,
                    const float* bias, const float* residual, float* y) {
  if (p.channels_last) return conv_transpose_upsample_nhwc(p, x, w, bias, residual, y);
  const Geometry g = to_3d(p);
  const ConvVolumes vol = conv_volumes(p, g);

  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t first_ic = (oc / vol.out_per_group) * vol.in_per_group;
      const int64_t oc_in_group = oc % vol.out_per_group;
      const int64_t plane_offset = (n * p.out_channels + oc) * vol.out_plane;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double acc = 0.0;
            for (int64_t ic = first_ic; ic < first_ic + vol.in_per_group; ++ic) {
              const float* x_plane = x + (n * p.in_channels + ic) * vol.in_plane;
              const float* w_k = w + (ic * vol.out_per_group + oc_in_group) * vol.kernel_volume;
              for_each_source_tap(g, o0, o1, o2, [&](int64_t xo, int64_t wo) {
                const double xv = x_plane[xo];
                const double wv = w_k[wo];
                acc += xv * wv;
              });
            }
            if (p.has_bias) acc += bias[oc];
            const int64_t yi = plane_offset + (o0 * g.out[1] + o1) * g.out[2] + o2;
            float v = static_cast<float>(acc);
            if (p.has_residual) v += residual[yi];
            y[yi] = apply_activation(p.act, v);
          }
    }
}

}  // namespace jetplan::kernels::cpu
