#include "kernels/activation.h"
#include "kernels/conv.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/half.h"
#include "kernels/int8_epilogue.h"
#include "kernels/quantization.h"

namespace jetplan::kernels::cpu {
namespace {

// Walks every output of a conv in the order (n, oc, spatial) and sums its taps in the order
// (input channel, kd, kh, kw) into an Acc: sum += Acc(x) * Acc(w). store(oc, yi, ri, sum) writes
// the output element yi (its offset in y; ri: its offset in the dense output, the residual's,
// which differs where y is a Concat's wider tensor written in place). channels_last only changes
// where each element lives (NHWC tensors, [Cout, *kernel, Cin / groups] weights), not the
// summation order.
template <typename Acc, typename X, typename W, typename Store>
void conv_sums(const ConvParams& p, const X* x, const W* w, Store store) {
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
  auto dense_at = [&](int64_t n, int64_t oc, int64_t s) {
    return cl ? (n * vol.out_plane + s) * p.out_channels + oc
              : (n * p.out_channels + oc) * vol.out_plane + s;
  };

  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oc = 0; oc < p.out_channels; ++oc) {
      const int64_t first_ic = (oc / vol.out_per_group) * vol.in_per_group;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            Acc acc = 0;
            for (int64_t ic = 0; ic < vol.in_per_group; ++ic) {
              for_each_tap(g, o0, o1, o2, [&](int64_t s, int64_t k) {
                acc += Acc(x[x_at(n, first_ic + ic, s)]) * Acc(w[w_at(oc, ic, k)]);
              });
            }
            const int64_t at = (o0 * g.out[1] + o1) * g.out[2] + o2;
            store(oc, y_at(n, oc, at), dense_at(n, oc, at), acc);
          }
    }
  }
}

// act(v + residual), or act(v) + residual (ConvParams::residual_after_act); `add` joins the
// residual, `act` applies the activation.
template <typename Add, typename Act>
float with_residual(const ConvParams& p, float v, Add add, Act act) {
  const bool after = p.has_residual && p.residual_after_act;
  const float a = act(p.has_residual && !after ? add(v) : v);
  return after ? add(a) : a;
}

}  // namespace

// Accumulates in double, then adds the bias, rounds to float once and adds the residual (before
// or after the activation): the reference error stays far below that of any GPU kernel checked
// against it.
void conv(const ConvParams& p, const float* x, const float* w, const float* bias,
          const float* residual, float* y) {
  conv_sums<double>(p, x, w, [&](int64_t oc, int64_t yi, int64_t ri, double acc) {
    if (p.has_bias) acc += bias[oc];
    y[yi] = with_residual(
        p, static_cast<float>(acc), [&](float a) { return a + residual[ri]; },
        [&](float a) { return apply_activation(p.act, a); });
  });
}

// The integer sum is exact in int64 and wraps to int32 once, as the GPU's int32 accumulators
// do; the epilogue is kernels/int8_epilogue.h's, as on the GPU. The residual is dense (ri).
void conv_int8(const ConvParams& p, const int8_t* x, const int8_t* w, const float* epi,
               const void* residual, void* y) {
  const ConvInt8& q = p.int8;
  conv_sums<int64_t>(p, x, w, [&](int64_t oc, int64_t yi, int64_t ri, int64_t sum) {
    const auto add = [&](float v) {
      if (q.residual_dtype == DType::kInt8)
        return int8_add_residual(v, static_cast<const int8_t*>(residual)[ri], q.residual_scale);
      if (q.residual_dtype == DType::kFloat16)
        return v + half_to_float(static_cast<const uint16_t*>(residual)[ri]);
      return v + static_cast<const float*>(residual)[ri];
    };
    const float v = with_residual(p, int8_real(wrap_int32(sum), epi[oc], epi[p.out_channels + oc]),
                                  add, [&](float a) { return activation_value(p.act, a); });
    if (q.y_dtype == DType::kInt8)
      static_cast<int8_t*>(y)[yi] = int8_quantize(v, q.y_inv_scale);
    else if (q.y_dtype == DType::kFloat16)
      static_cast<uint16_t*>(y)[yi] = half_from_float(v);
    else
      static_cast<float*>(y)[yi] = v;
  });
}

}  // namespace jetplan::kernels::cpu
