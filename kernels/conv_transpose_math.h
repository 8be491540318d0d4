// The index math of ConvTranspose, shared by the CPU twin (kernels/cpu/conv_transpose.cc) and
// the CUDA gather kernel (kernels/cuda/conv_transpose.cu): the geometry as 3-D, and which input
// position a kernel tap carries to an output position.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/params_nn.h"

namespace jetplan::kernels::conv_transpose_math {

// 1D and 2D run as 3D: the missing spatial dims go in front with size 1, kernel 1, stride 1,
// dilation 1 and no padding, which changes no row-major offset.
struct Geometry {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
};

JP_HD inline Geometry to_3d(const ConvTransposeParams& p) {
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
JP_HD inline int64_t tap_source(const Geometry& g, int d, int64_t o, int64_t k) {
  const int64_t t = o + g.pad[d] - k * g.dilation[d];
  if (t < 0 || t % g.stride[d] != 0) return -1;
  const int64_t i = t / g.stride[d];
  return i < g.in[d] ? i : -1;
}

}  // namespace jetplan::kernels::conv_transpose_math
