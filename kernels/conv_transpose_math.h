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

}  // namespace jetplan::kernels::conv_transpose_math
