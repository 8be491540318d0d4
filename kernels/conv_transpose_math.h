// The index math of ConvTranspose, shared by the CPU twin (kernels/cpu/conv_transpose.cc) and
// the CUDA gather kernel (kernels/cuda/conv_transpose.cu): the geometry as 3-D (conv_geometry.h),
// and which input position a kernel tap carries to an output position.
#pragma once

#include <cstdint>

#include "kernels/conv_geometry.h"
#include "kernels/host_device.h"
#include "kernels/conv_transpose.h"

namespace jetplan::kernels::conv_transpose_math {

using Geometry = ConvGeometry;

JP_HD inline Geometry to_3d(const ConvTransposeParams& p) { return conv_geometry_3d(p); }

// The input position that kernel tap k of dim d carries to output position o, or -1 when none
// does (o = i * stride - pad + k * dilation has no integer i inside the input).
JP_HD inline int64_t tap_source(const Geometry& g, int d, int64_t o, int64_t k) {
  const int64_t t = o + g.pad[d] - k * g.dilation[d];
  if (t < 0 || t % g.stride[d] != 0) return -1;
  const int64_t i = t / g.stride[d];
  return i < g.in[d] ? i : -1;
}

// Calls tap(x offset, w offset) for every kernel tap that carries an input position to output
// position (o0, o1, o2), in (k0, k1, k2) order: the input position's row-major offset in the
// 3-D input plane and the tap's offset in the kernel volume.
template <typename Tap>
JP_HD_INLINE void for_each_source_tap(const Geometry& g, int64_t o0, int64_t o1, int64_t o2,
                                      Tap tap) {
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    const int64_t i0 = tap_source(g, 0, o0, k0);
    if (i0 < 0) continue;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      const int64_t i1 = tap_source(g, 1, o1, k1);
      if (i1 < 0) continue;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        const int64_t i2 = tap_source(g, 2, o2, k2);
        if (i2 < 0) continue;
        tap((i0 * g.in[1] + i1) * g.in[2] + i2, (k0 * g.kernel[1] + k1) * g.kernel[2] + k2);
      }
    }
  }
}

}  // namespace jetplan::kernels::conv_transpose_math
