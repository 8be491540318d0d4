// QLinearConv on the GPU: one thread per output element (grid-stride; NCHW, 1-D to 3-D as the
// twin's conv_geometry_3d), the exact integer sum over the group's channels and the taps inside
// the input (padding is the zero point: a term of 0), plus the int32 bias, and the twin's double
// requantization (kernels/cuda/quantized_math.cuh), so the bits agree with
// kernels/cpu/qlinear_conv.cc. Inputs in ONNX's order: x, x_scale, x_zero_point, w, w_scale,
// w_zero_point, y_scale, y_zero_point[, bias].
#include <cstdint>

#include "kernels/conv_geometry.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/quantized_math.cuh"
#include "kernels/qlinear_conv.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ void qlinear_conv(const StepPointers& ptrs, const QLinearConvParams& q) {
  const ConvParams& p = q.conv;
  if (p.groups < 1 || p.spatial_rank < 1 || p.spatial_rank > 3) return;
  const ConvGeometry g = conv_geometry_3d(p);
  const ConvVolumes vol = conv_volumes(p, g);
  const void* x = ptrs.in[0];
  const float x_scale = *static_cast<const float*>(ptrs.in[1]);
  const int32_t x_zp = load_q(q.x_type, ptrs.in[2], 0);
  const void* w = ptrs.in[3];
  const float* w_scale = static_cast<const float*>(ptrs.in[4]);
  const void* w_zps = ptrs.in[5];
  const float y_scale = *static_cast<const float*>(ptrs.in[6]);
  const int32_t y_zp = load_q(q.y_type, ptrs.in[7], 0);
  const int32_t* bias = p.has_bias ? static_cast<const int32_t*>(ptrs.in[8]) : nullptr;
  const int64_t count = p.batch * p.out_channels * vol.out_plane;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t pos = i % vol.out_plane, oc = (i / vol.out_plane) % p.out_channels,
                  n = i / (vol.out_plane * p.out_channels);
    const int64_t o2 = pos % g.out[2], o1 = (pos / g.out[2]) % g.out[1],
                  o0 = pos / (g.out[2] * g.out[1]);
    const int64_t wq = q.w_per_channel ? oc : 0;
    const int32_t w_zp = load_q(q.w_type, w_zps, wq);
    const int64_t first_ic = (oc / vol.out_per_group) * vol.in_per_group;
    const int64_t w_oc = oc * vol.in_per_group * vol.kernel_volume;
    int64_t acc = bias != nullptr ? bias[oc] : 0;
    for (int64_t ic = 0; ic < vol.in_per_group; ++ic) {
      const int64_t x_plane = (n * p.in_channels + first_ic + ic) * vol.in_plane;
      const int64_t w_ic = w_oc + ic * vol.kernel_volume;
      for_each_tap(g, o0, o1, o2, [&](int64_t s, int64_t k) {
        acc += int64_t{load_q(q.x_type, x, x_plane + s) - x_zp} *
               (load_q(q.w_type, w, w_ic + k) - w_zp);
      });
    }
    store_q(q.y_type, ptrs.out[0], i,
            requantize_q(acc, multiplier_q(x_scale, w_scale[wq], y_scale), y_zp, q.y_type));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_qlinear_conv, QLinearConvParams, jetplan::kernels::cuda::qlinear_conv)
