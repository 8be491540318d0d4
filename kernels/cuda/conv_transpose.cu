// ConvTranspose on the GPU, y = act(convT(x, w) + bias + residual); inputs x, w, then bias
// (has_bias), then residual (has_residual). Twin: kernels/cpu/conv_transpose.cc (a gather that
// sums in double; these sum in FP32).
//
//   jp_conv_transpose_upsample_igemm_<tile>_f16  channels_last, the upsampling form
//                     (conv_transpose_upsamples: the U-Net's and FPN's 2x2 stride 2): Conv's
//                     implicit GEMM on the tensor cores (conv_igemm.cuh) over [N*H*W, Cin] x
//                     [Cin, KH*KW*Cout], its epilogue scattering each row to its KH x KW output
//                     pixels. _anyc: any Cin; the others Cin % 8 == 0.
//   jp_conv_transpose_upsample_{f16,f32}  NCHW upsampling form: a thread per 8 output channels x 4
//                     input columns.
//   jp_conv_transpose_{f16,f32}  NCHW, 1-D to 3-D, any form: a direct gather, a thread per
//                     output element.
#include <cuda_fp16.h>

#include <new>

#include "kernels/conv_transpose.h"
#include "kernels/conv_transpose_math.h"
#include "kernels/cuda/conv_igemm.cuh"
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
  if (p.channels_last || p.spatial_rank < 1 || p.spatial_rank > 3 || p.groups < 1) return;
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

template <typename T>
__device__ void conv_transpose_upsample(const StepPointers& ptrs, const ConvTransposeParams& p) {
  if (p.channels_last || !conv_transpose_upsamples(p)) return;
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

// ------------------------------------------------------- NHWC upsampling on the tensor cores
// The GEMM view of a channels_last upsampling step, as igemm<T, Epi>() (conv_igemm.cuh) takes
// it: a 1x1 stride-1 conv over x as [N*H*W, Cin] (igemm's pointwise form: x read as the matrix
// it is) with KH*KW*Cout output channels, whose B matrix is w, [KH, KW, Cout, Cin]. The epilogue
// needs what a 1x1 conv does not hold, the scatter's geometry: igemm hands the params it was
// given, this struct, to EpilogueUpsample by reference, which reads them back.
struct UpsampleGemm : ConvParams {
  int32_t kh, kw, cout;  // the kernel (== stride) and the output channels
  int64_t ldy, y0;       // y's channels a pixel and the step's first (a Concat's slice)
};

__device__ __forceinline__ UpsampleGemm upsample_gemm(const ConvTransposeParams& t) {
  UpsampleGemm g;
  g.spatial_rank = 2;
  g.batch = t.batch;
  g.in_channels = t.in_channels;
  g.out_channels = t.kernel[0] * t.kernel[1] * t.out_channels;
  g.groups = 1;
  for (int d = 0; d < 2; ++d) g.in_size[d] = g.out_size[d] = t.in_size[d];
  g.has_bias = t.has_bias;
  g.has_residual = t.has_residual;
  g.act = t.act;
  g.channels_last = true;
  g.kh = int32_t(t.kernel[0]);
  g.kw = int32_t(t.kernel[1]);
  g.cout = int32_t(t.out_channels);
  g.ldy = t.y_channels != 0 ? t.y_channels : t.out_channels;
  g.y0 = t.y_channel_offset;
  return g;
}

// The igemm epilogue of the upsampling GEMM (EpilogueF16's interface and order, conv.cu: bias,
// residual, activation, FP16 store). GEMM row m is input pixel (n, h, w), column j = (kh * KW +
// kw) * Cout + c; the value lands at output pixel (n, h * KH + kh, w * KW + kw), channel c. A
// group of four columns from a multiple of 4 stays in one (kh, kw) and is four consecutive
// channels of one output pixel when Cout % 4 == 0 (aligned4): one 8-byte access. y's pixels
// are ldy channels apart from channel y0 where the step writes a Concat's channel slice
// (ConvTransposeParams.y_channels, y_channel_offset); the residual is dense.
struct EpilogueUpsample {
  static constexpr bool kExtendedActivations = false;
  struct Ctx {
    const __half* bias;
    const __half* res;
    __half* y;
    int H, W, kh, kw, cout;
    int64_t ldy, y0;
  };
  static __device__ __forceinline__ const UpsampleGemm& gemm(const ConvParams& p) {
    return static_cast<const UpsampleGemm&>(p);
  }
  static __device__ __forceinline__ bool fits(const ConvParams& p) { return !p.int8.enabled; }
  static __device__ __forceinline__ Ctx context(const StepPointers& ptrs, const ConvParams& p,
                                                int) {
    const UpsampleGemm& g = gemm(p);
    return {p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr,
            p.has_residual ? static_cast<const __half*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr,
            static_cast<__half*>(ptrs.out[0]),
            int(p.in_size[0]),
            int(p.in_size[1]),
            g.kh,
            g.kw,
            g.cout,
            g.ldy,
            g.y0};
  }
  // Where GEMM element (m, j) lands in the residual (dense), and in y (ldy channels a pixel,
  // from y0).
  static __device__ __forceinline__ int64_t at(const Ctx& c, int m, int j, int64_t ld = 0,
                                               int64_t first = 0) {
    const int w = m % c.W, t = m / c.W, h = t % c.H, n = t / c.H;
    const int ch = j % c.cout, tap = j / c.cout, kx = tap % c.kw, ky = tap / c.kw;
    const int64_t oy = int64_t(h) * c.kh + ky, ox = int64_t(w) * c.kw + kx;
    const int64_t pixel = (int64_t(n) * c.H * c.kh + oy) * (int64_t(c.W) * c.kw) + ox;
    return pixel * (ld != 0 ? ld : c.cout) + first + ch;
  }
  static __device__ __forceinline__ int64_t at_y(const Ctx& c, int m, int j) {
    return at(c, m, j, c.ldy, c.y0);
  }
  struct Col {
    float b[2];  // the bias of columns j and j + 1 (0 without one or past N)
  };
  static __device__ __forceinline__ Col column(const Ctx& c, const ConvParams& p, int j, int N) {
    Col col{{0.f, 0.f}};
    if (p.has_bias) {
      if (j < N) col.b[0] = __half2float(c.bias[j % c.cout]);
      if (j + 1 < N) col.b[1] = __half2float(c.bias[(j + 1) % c.cout]);
    }
    return col;
  }
  static __device__ __forceinline__ float staged(const ConvParams& p, const Col& col, int e,
                                                 float acc) {
    return p.has_bias ? acc + col.b[e] : acc;
  }
  static __device__ __forceinline__ bool aligned4(const Ctx& c, const ConvParams&, int) {
    return c.cout % 4 == 0 && c.ldy % 4 == 0 && c.y0 % 4 == 0;
  }
  template <bool FAST>
  static __device__ __forceinline__ void residual(const Ctx& c, const ConvParams& p, bool ok,
                                                  int m, int j, int N, float (&r)[4]) {
    if (!ok || !p.has_residual) return;
    if constexpr (FAST) {
      load4<true>(c.res, at(c, m, j), 4, r);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (j + e < N) r[e] = __half2float(c.res[at(c, m, j + e)]);
    }
  }
  template <int A, bool FAST>
  static __device__ __forceinline__ void store4(const Ctx& c, const ConvParams& p, int m, int j,
                                                int N, float4 s, const float (&r)[4]) {
    float v[4] = {s.x, s.y, s.z, s.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (p.has_residual) v[e] += r[e];
      v[e] = act_value<A>(p.act, v[e]);
    }
    if constexpr (FAST) {
      store4_half<true>(c.y, at_y(c, m, j), 4, v);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (j + e < N) c.y[at_y(c, m, j + e)] = __float2half_rn(v[e]);
    }
  }
};

// One channels_last upsampling step through igemm tile T; anything else computes nothing (the
// selector never picks it; a plan is untrusted). Never split over K: the launch has no workspace.
// The GEMM's params live in shared memory: igemm indexes their arrays at run time (geo2), which
// in a thread's own copy would put all of them in local memory (248 bytes of stack a thread).
template <typename T>
__device__ __forceinline__ void upsample_igemm(const StepPointers& ptrs,
                                               const ConvTransposeParams& p) {
  if (!p.channels_last || !conv_transpose_upsamples(p) || gridDim.z != 1 ||
      p.out_channels * p.kernel[0] * p.kernel[1] >= (int64_t{1} << 31)) {
    pdl_wait();  // an early launch waits on every path (device_math.cuh)
    return;
  }
  __shared__ __align__(16) unsigned char gemm_bytes[sizeof(UpsampleGemm)];
  UpsampleGemm* gemm = reinterpret_cast<UpsampleGemm*>(gemm_bytes);
  if (threadIdx.x == 0) new (gemm) UpsampleGemm(upsample_gemm(p));
  __syncthreads();
  igemm<T, EpilogueUpsample>(ptrs, *gemm);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

// The tiles are conv.cu's of the same names (kernels/conv.h rows: block, shared memory);
// MINB as there (two CTAs an SM for the 128x128 tile, no bound for the others).
#define JP_CONV_TRANSPOSE_IGEMM(name, threads, MINB, BM, BN, BK, WM, WN, ST, VEC)         \
  extern "C" __global__ void __launch_bounds__(threads, MINB)                            \
      name(jetplan::kernels::cuda::StepPointers ptrs,                                     \
           const jetplan::kernels::ConvTransposeParams p) {                               \
    jetplan::kernels::cuda::upsample_igemm<                                               \
        jetplan::kernels::cuda::Igemm<__half, BM, BN, BK, WM, WN, ST, VEC>>(ptrs, p);      \
  }
JP_CONV_TRANSPOSE_IGEMM(jp_conv_transpose_upsample_igemm_128x128_f16, 256, 2, 128, 128, 32, 2, 4, 3, true)
JP_CONV_TRANSPOSE_IGEMM(jp_conv_transpose_upsample_igemm_64x64_f16, 128, 1, 64, 64, 32, 2, 2, 4, true)
JP_CONV_TRANSPOSE_IGEMM(jp_conv_transpose_upsample_igemm_32x64_f16, 128, 1, 32, 64, 32, 1, 4, 4, true)
JP_CONV_TRANSPOSE_IGEMM(jp_conv_transpose_upsample_igemm_64x64_anyc_f16, 128, 1, 64, 64, 32, 2, 2, 4, false)
#undef JP_CONV_TRANSPOSE_IGEMM

JP_HALF_AND_FLOAT_KERNELS(jp_conv_transpose, ConvTransposeParams,
                          jetplan::kernels::cuda::conv_transpose)
JP_HALF_AND_FLOAT_KERNELS(jp_conv_transpose_upsample, ConvTransposeParams,
                          jetplan::kernels::cuda::conv_transpose_upsample)
