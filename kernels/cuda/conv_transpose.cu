// ConvTranspose on the GPU, NCHW (1-D, 2-D and 3-D), FP16 storage with FP32 accumulation and
// FP32: a direct gather, one thread per output element, y = act(convT(x, w) + bias + residual).
// Inputs: x, w [Cin, Cout / groups, *kernel], then bias (has_bias), then residual (has_residual).
// Twin: kernels/cpu/conv_transpose.cc (same gather; it sums in double, this in FP32, taps
// outer and input channels inner). The U-Net's 2x2 stride-2 upsampling reads one tap per output.
#include <cuda_fp16.h>

#include "kernels/conv_transpose.h"
#include "kernels/conv_transpose_math.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

using conv_transpose_math::Geometry;
using conv_transpose_math::for_each_source_tap;
using conv_transpose_math::tap_source;
using conv_transpose_math::to_3d;

template <typename T>
__device__ void conv_transpose(const StepPointers& ptrs, const ConvTransposeParams& p) {
  if (p.spatial_rank < 1 || p.spatial_rank > 3 || p.groups < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* w = static_cast<const T*>(ptrs.in[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[2]) : nullptr;
  const T* res = p.has_residual ? static_cast<const T*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  const Geometry g = to_3d(p);
  const int64_t in_per_group = p.in_channels / p.groups;
  const int64_t out_per_group = p.out_channels / p.groups;
  if (out_per_group < 1) return;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t count = p.batch * p.out_channels * out_plane;
  for (int64_t yi = global_thread(); yi < count; yi += global_threads()) {
    int64_t rest = yi;
    const int64_t o2 = rest % g.out[2];
    rest /= g.out[2];
    const int64_t o1 = rest % g.out[1];
    rest /= g.out[1];
    const int64_t o0 = rest % g.out[0];
    rest /= g.out[0];
    const int64_t oc = rest % p.out_channels;
    const int64_t n = rest / p.out_channels;
    const int64_t first_ic = (oc / out_per_group) * in_per_group;
    const T* xg = x + (n * p.in_channels + first_ic) * in_plane;
    const T* wg = w + (first_ic * out_per_group + oc % out_per_group) * kvol;
    const int64_t w_ic_stride = out_per_group * kvol;
    float acc = 0.f;
    for_each_source_tap(g, o0, o1, o2, [&](int64_t xo, int64_t wo) {
      for (int64_t ic = 0; ic < in_per_group; ++ic)
        acc = fmaf(load_float(xg, ic * in_plane + xo), load_float(wg, ic * w_ic_stride + wo), acc);
    });
    if (bias != nullptr) acc += load_float(bias, oc);
    if (res != nullptr) acc += load_float(res, yi);
    store_float(y, yi, activation_value(p.act, acc));
  }
}

// Non-overlapping 2-D upsampling (kernel == stride, no padding, groups 1, dilation 1, out = in *
// stride: the U-Net's 2x2 stride-2 ConvTranspose): each output reads exactly one tap, so it is
// a GEMM over the input channels. A thread computes kOcTile output channels x kPxTile input
// columns of one (output row, kx) tap: per input channel kPxTile x loads (adjacent threads take
// adjacent columns) and kOcTile weight loads (the same for the whole warp) feed
// kOcTile * kPxTile FMAs. Any other geometry computes nothing (the selector never picks it).
constexpr int kOcTile = 8, kPxTile = 4;

__device__ __forceinline__ bool is_upsampling(const ConvTransposeParams& p) {
  if (p.spatial_rank != 2 || p.groups != 1) return false;
  for (int d = 0; d < 2; ++d) {
    if (p.stride[d] < 1 || p.kernel[d] != p.stride[d] || p.dilation[d] != 1 ||
        p.pad_begin[d] != 0 || p.out_size[d] != p.in_size[d] * p.stride[d])
      return false;
  }
  return true;
}

template <typename T>
__device__ void conv_transpose_upsample(const StepPointers& ptrs, const ConvTransposeParams& p) {
  if (!is_upsampling(p)) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* w = static_cast<const T*>(ptrs.in[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[2]) : nullptr;
  const T* res = p.has_residual ? static_cast<const T*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t C = p.in_channels, K = p.out_channels, IH = p.in_size[0], IW = p.in_size[1];
  const int64_t SY = p.stride[0], SX = p.stride[1], OH = p.out_size[0], OW = p.out_size[1];
  const int64_t kvol = SY * SX, in_plane = IH * IW;
  const int64_t px_tiles = (IW + kPxTile - 1) / kPxTile, oc_tiles = (K + kOcTile - 1) / kOcTile;
  const int64_t count = p.batch * oc_tiles * OH * SX * px_tiles;
  for (int64_t idx = global_thread(); idx < count; idx += global_threads()) {
    int64_t rest = idx;
    const int64_t pt = rest % px_tiles;
    rest /= px_tiles;
    const int64_t kx = rest % SX;
    rest /= SX;
    const int64_t oy = rest % OH;
    rest /= OH;
    const int64_t ot = rest % oc_tiles;
    const int64_t n = rest / oc_tiles;
    const int64_t iy = oy / SY, ky = oy % SY, ix0 = pt * kPxTile, oc0 = ot * kOcTile;
    const int npx = static_cast<int>(IW - ix0 < kPxTile ? IW - ix0 : kPxTile);
    const int noc = static_cast<int>(K - oc0 < kOcTile ? K - oc0 : kOcTile);
    const T* xr = x + n * C * in_plane + iy * IW + ix0;
    const T* wr = w + oc0 * kvol + ky * SX + kx;
    float acc[kOcTile][kPxTile] = {};
    for (int64_t ic = 0; ic < C; ++ic) {
      float xv[kPxTile];
#pragma unroll
      for (int q = 0; q < kPxTile; ++q) xv[q] = q < npx ? load_float(xr, ic * in_plane + q) : 0.f;
#pragma unroll
      for (int o = 0; o < kOcTile; ++o) {
        const float wv = o < noc ? load_float(wr, (ic * K + o) * kvol) : 0.f;
#pragma unroll
        for (int q = 0; q < kPxTile; ++q) acc[o][q] = fmaf(xv[q], wv, acc[o][q]);
      }
    }
#pragma unroll
    for (int o = 0; o < kOcTile; ++o) {
      if (o >= noc) break;
      const int64_t oc = oc0 + o;
      const float b = bias != nullptr ? load_float(bias, oc) : 0.f;
#pragma unroll
      for (int q = 0; q < kPxTile; ++q) {
        if (q >= npx) break;
        const int64_t yi = ((n * K + oc) * OH + oy) * OW + (ix0 + q) * SX + kx;
        float v = acc[o][q] + b;
        if (res != nullptr) v += load_float(res, yi);
        store_float(y, yi, activation_value(p.act, v));
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_conv_transpose, ConvTransposeParams,
                          jetplan::kernels::cuda::conv_transpose)
JP_HALF_AND_FLOAT_KERNELS(jp_conv_transpose_upsample, ConvTransposeParams,
                          jetplan::kernels::cuda::conv_transpose_upsample)
