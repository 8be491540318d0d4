// The geometry of a convolution-like step as 3-D, shared by the CPU Conv, QLinearConv and
// ConvTranspose twins and the CUDA ConvTranspose kernel (host and device).
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace jetplan::kernels {

// 1D and 2D run as 3D: the missing spatial dims go in front with size 1, kernel 1, stride 1,
// dilation 1 and no padding, which changes no row-major offset. `pad` is the leading padding.
struct ConvGeometry {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
};

// P: ConvParams or ConvTransposeParams (spatial_rank, in_size, out_size, kernel, stride,
// dilation, pad_begin).
template <typename P>
JP_HD inline ConvGeometry conv_geometry_3d(const P& p) {
  ConvGeometry g;
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

// Whether coordinate i of a dim of `size` lies inside it (a window tap not in the padding).
JP_HD inline bool inside_dim(int64_t i, int64_t size) { return i >= 0 && i < size; }

// Calls tap(s, k) for every kernel tap of output position (o0, o1, o2) that lands inside the
// input (taps in the padding are skipped), in (k0, k1, k2) order: s is the input position's
// row-major offset in the 3-D plane, k the tap's offset in the kernel volume. (CPU twins, and the
// CUDA QLinearConv kernel.)
template <typename Tap>
JP_HD inline void for_each_tap(const ConvGeometry& g, int64_t o0, int64_t o1, int64_t o2, Tap tap) {
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    const int64_t i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dilation[0];
    if (!inside_dim(i0, g.in[0])) continue;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      const int64_t i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dilation[1];
      if (!inside_dim(i1, g.in[1])) continue;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        const int64_t i2 = o2 * g.stride[2] - g.pad[2] + k2 * g.dilation[2];
        if (!inside_dim(i2, g.in[2])) continue;
        tap((i0 * g.in[1] + i1) * g.in[2] + i2, (k0 * g.kernel[1] + k1) * g.kernel[2] + k2);
      }
    }
  }
}

// The per-group channel counts and the plane and kernel volumes of a Conv, QLinearConv or
// ConvTranspose twin (P: ConvParams or ConvTransposeParams; g: its conv_geometry_3d).
struct ConvVolumes {
  int64_t in_per_group, out_per_group, in_plane, out_plane, kernel_volume;
};

template <typename P>
JP_HD inline ConvVolumes conv_volumes(const P& p, const ConvGeometry& g) {
  return {p.in_channels / p.groups, p.out_channels / p.groups, g.in[0] * g.in[1] * g.in[2],
          g.out[0] * g.out[1] * g.out[2], g.kernel[0] * g.kernel[1] * g.kernel[2]};
}

}  // namespace jetplan::kernels
