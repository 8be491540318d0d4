#include "kernels/qlinear_conv.h"

#include "kernels/conv_geometry.h"
#include "kernels/quantization.h"

namespace jetplan::kernels::cpu {

void qlinear_conv(const QLinearConvParams& q, const void* x, const float* x_scale,
                  const void* x_zero_point, const void* w, const float* w_scale,
                  const void* w_zero_point, const float* y_scale, const void* y_zero_point,
                  const int32_t* bias, void* y) {
  const ConvParams& p = q.conv;
  const ConvGeometry g = conv_geometry_3d(p);
  const ConvVolumes vol = conv_volumes(p, g);
  const int32_t x_zp = load_quantized(q.x_type, x_zero_point, 0);
  const int32_t y_zp = load_quantized(q.y_type, y_zero_point, 0);

  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t wq = q.w_per_channel ? oc : 0;
      const int32_t w_zp = load_quantized(q.w_type, w_zero_point, wq);
      const double mult = multiplier(*x_scale, w_scale[wq], *y_scale);
      const int64_t first_ic = (oc / vol.out_per_group) * vol.in_per_group;
      const int64_t w_oc = oc * vol.in_per_group * vol.kernel_volume;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            // Padding is x_zp in ONNX's quantized domain, i.e. a term of 0: skipped.
            int64_t acc = p.has_bias ? bias[oc] : 0;
            for (int64_t ic = 0; ic < vol.in_per_group; ++ic) {
              const int64_t x_plane = (n * p.in_channels + first_ic + ic) * vol.in_plane;
              const int64_t w_ic = w_oc + ic * vol.kernel_volume;
              for_each_tap(g, o0, o1, o2, [&](int64_t s, int64_t k) {
                const int32_t xv = load_quantized(q.x_type, x, x_plane + s);
                const int32_t wv = load_quantized(q.w_type, w, w_ic + k);
                acc += int64_t{xv - x_zp} * (wv - w_zp);
              });
            }
            const int64_t yi =
                (n * p.out_channels + oc) * vol.out_plane + (o0 * g.out[1] + o1) * g.out[2] + o2;
            store_quantized(q.y_type, y, yi,
                            quantize_value(wrap_int32(acc) * mult, y_zp, q.y_type));
          }
    }
  }
}

}  // namespace jetplan::kernels::cpu
