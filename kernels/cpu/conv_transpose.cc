#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/nn_ops.h"

namespace jetplan::kernels::cpu {

namespace {

// 1D and 2D run as 3D: the missing spatial dims go in front with size 1, kernel 1, stride 1,
// dilation 1 and no padding, which changes no row-major offset.
struct Geometry {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
};

Geometry to_3d(const ConvTransposeParams& p) {
  Geometry g;
  const int lead = 3 - p.spatial_rank;
  for (int d = 0; d < 3; ++d) {
    const int s = d - lead;  // index into the params, negative for an added dim
    g.in[d] = s < 0 ? 1 : p.in_size[s];
    g.out[d] = s < 0 ? 1 : p.out_size[s];
    g.kernel[d] = s < 0 ? 1 : p.kernel[s];
    g.stride[d] = s < 0 ? 1 : p.stride[s];
    g.dilation[d] = s < 0 ? 1 : p.dilation[s];
    g.pad[d] = s < 0 ? 0 : p.pad_begin[s];
  }
  return g;
}

// The input position that kernel tap k of dim d carries to output position o, or -1 when none
// does (o = i * stride - pad + k * dilation has no integer i inside the input).
int64_t source(const Geometry& g, int d, int64_t o, int64_t k) {
  const int64_t t = o + g.pad[d] - k * g.dilation[d];
  if (t < 0 || t % g.stride[d] != 0) return -1;
  const int64_t i = t / g.stride[d];
  return i < g.in[d] ? i : -1;
}

}  // namespace

// Written as a gather, one output at a time, so each output has a fixed summation order (input
// channel, k0, k1, k2) in double and no two outputs share an accumulator; then the bias, one
// rounding to float, the residual and the activation, as conv does.
void conv_transpose(const ConvTransposeParams& p, const float* x, const float* w,
                    const float* bias, const float* residual, float* y) {
  const Geometry g = to_3d(p);
  const int64_t in_per_group = p.in_channels / p.groups;
  const int64_t out_per_group = p.out_channels / p.groups;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t kernel_volume = g.kernel[0] * g.kernel[1] * g.kernel[2];

  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t first_ic = (oc / out_per_group) * in_per_group;
      const int64_t oc_in_group = oc % out_per_group;
      const int64_t plane_offset = (n * p.out_channels + oc) * out_plane;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double acc = 0.0;
            for (int64_t ic = first_ic; ic < first_ic + in_per_group; ++ic) {
              const float* x_plane = x + (n * p.in_channels + ic) * in_plane;
              const float* w_k = w + (ic * out_per_group + oc_in_group) * kernel_volume;
              for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
                const int64_t i0 = source(g, 0, o0, k0);
                if (i0 < 0) continue;
                for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
                  const int64_t i1 = source(g, 1, o1, k1);
                  if (i1 < 0) continue;
                  for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                    const int64_t i2 = source(g, 2, o2, k2);
                    if (i2 < 0) continue;
                    const double xv = x_plane[(i0 * g.in[1] + i1) * g.in[2] + i2];
                    const double wv = w_k[(k0 * g.kernel[1] + k1) * g.kernel[2] + k2];
                    acc += xv * wv;
                  }
                }
              }
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
