// Conv on the GPU, channels_last (NHWC activations, weights [Cout, *kernel, Cin / groups]).
// Twin: kernels/cpu/conv.cc. FP16 steps accumulate in FP32, y = act(conv + bias + residual)
// (or act(conv + bias) + residual: ConvParams::residual_after_act):
//
//   jp_conv_igemm_<BM>x<BN>_f16       implicit GEMM on tensor cores (kernels/cuda/conv_igemm.cuh:
//                                     mma.sync m16n8k16, ldmatrix, cp.async multi-stage pipeline,
//                                     serial split-K), 2-D, groups 1, Cin % 8 == 0.
//   jp_conv_igemm_<BM>x<BN>k64_f16    the same with 64 K a stage: half the pipeline steps (the
//                                     128x128 one 108 KiB of shared memory: sm_87, sm_90).
//   jp_conv_igemm_64x64_anyc_f16      the same for any Cin (element-wise loads into shared memory).
//   jp_conv_stem_n{32,64}_f16         short K (RGB stems; conv_stem_fits): a tile's input row
//                                     segments loaded whole, the im2col A read from them
//                                     (kernels/cuda/conv_stem.cuh); N tiles of 32 or 64.
//   jp_conv_igemm_<BM>x64_grouped_f16 the grouped form (conv_grouped_igemm_fits: 1-D/2-D, a group
//                                     of 4k channels, Cin % 8 == 0): each N tile of 64 output
//                                     channels runs K over its groups' input channels, the other
//                                     groups' weights loaded as zeros.
//   jp_conv_dw<K>_f16                 depthwise KxK (3, 5 at stride 1 or 2; 7 at 1), C % 8 == 0:
//                                     8 channels a thread (kernels/cuda/conv_depthwise.cuh).
//   jp_conv_depthwise_f16             groups == Cin == Cout, 2-D (the other depthwise convs).
//   jp_conv_direct_f16                everything else (other grouped, 3-D): one thread per output.
//   jp_conv_direct_f32                the direct kernel in Float32: the grouped convs of Float32
//                                     GPU plans (--precision fp32).
//   jp_conv_igemm_f32                 Float32, groups 1, 1-3 spatial dims: FP32 implicit GEMM,
//                                     64x64 tiles in shared memory (conv_select.cc).
// (The output stages all of them share: kernels/cuda/conv_epilogue.cuh.)
//
// INT8 steps (ConvInt8 in kernels/conv.h) accumulate in int32 and requantize in the epilogue:
//
//   jp_conv_igemm_<BM>x<BN>_i8[_f16out]  the same implicit GEMM with mma.sync m16n8k32 s8, 2-D,
//                                     groups 1, Cin % 16 == 0; Int8 y, or Float16 y (_f16out).
//   jp_conv_igemm_{32,64}x64_c8_i8[_f16out] the same for Cin % 8 == 0 (8-byte cp.async halves).
//   jp_conv_igemm_32x64_grouped_i8[_f16out]  the grouped form (groups of 8k channels, Cin % 8
//                                     == 0; 8-byte cp.async halves).
//   jp_conv_dw<K>_i8[_f16out]         the tiled depthwise kernels' INT8 form (and
//                                     jp_conv_dw3_1row_i8[_f16out], a kernel row of x at a time).
//   jp_conv_depthwise_i8[_f16out]     groups == Cin == Cout, 2-D, any C (four channels a
//                                     thread when C % 4 == 0).
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/conv_geometry.h"
#include "kernels/cuda/conv_depthwise.cuh"
#include "kernels/cuda/conv_epilogue.cuh"
#include "kernels/cuda/conv_igemm.cuh"
#include "kernels/cuda/conv_stem.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/fp32_tile.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cuda {
namespace {

// ------------------------------------------------------------------------ depthwise

// The walk both depthwise kernels share: grid-stride over every (output pixel, group of VEC
// channels), consecutive threads taking consecutive channels so that every load and store is
// coalesced over NHWC. body(pixel, c0, taps): taps(f) calls f(offset of the tap's x pixel,
// channel 0, in elements; tap index kh * KW + kw) for every tap inside x. KH/KW > 0:
// compile-time kernel size.
template <int KH, int KW, int VEC, typename Body>
__device__ __forceinline__ void depthwise_walk(const ConvParams& p, const Geo2& g, Body body) {
  const int kh_n = KH > 0 ? KH : g.KH, kw_n = KW > 0 ? KW : g.KW;
  const int groups = g.C / VEC;
  const int64_t total = p.batch * g.OH * g.OW * groups;
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int c0 = int(i % groups) * VEC;
    const int64_t pixel = i / groups;
    int64_t t = pixel / g.OW;
    const int ow = int(pixel - t * g.OW);
    const int oh = int(t % g.OH);
    const int64_t n = t / g.OH;
    auto taps = [&](auto f) {
#pragma unroll
      for (int kh = 0; kh < kh_n; ++kh) {
        const int ih = oh * g.sh - g.ph + kh * g.dh;
        if (ih < 0 || ih >= g.H) continue;
#pragma unroll
        for (int kw = 0; kw < kw_n; ++kw) {
          const int iw = ow * g.sw - g.pw + kw * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          f(((n * g.H + ih) * g.W + iw) * g.C, kh * kw_n + kw);
        }
      }
    };
    body(pixel, c0, taps);
  }
}

// One thread per (output pixel, channel).
template <int KH, int KW>
__device__ __forceinline__ void depthwise(const StepPointers& ptrs, const ConvParams& p) {
  const Geo2 g = geo2(p);
  const __half* x = static_cast<const __half*>(ptrs.in[0]);
  const __half* w = static_cast<const __half*>(ptrs.in[1]);
  const __half* bias = p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
  const __half* res = residual_ptr(ptrs, p);
  __half* y = static_cast<__half*>(ptrs.out[0]);
  const int kvol = (KH > 0 ? KH : g.KH) * (KW > 0 ? KW : g.KW);
  depthwise_walk<KH, KW, 1>(p, g, [&](int64_t pixel, int c, auto taps) {
    const __half* wc = w + int64_t(c) * kvol;
    float acc = 0.f;
    taps([&](int64_t xo, int k) { acc += __half2float(x[xo + c]) * __half2float(wc[k]); });
    const int64_t i = pixel * g.C + c;
    y[y_index(p, i, c)] = __float2half_rn(epilogue(p, bias, res, i, c, acc));
  });
}

// ------------------------------------------------------------------------ depthwise INT8

// One thread per (output pixel, VEC channels): exact int32 sums of the Int8 taps (the CPU
// twin's integers), then EpilogueI8's per-element epilogue, into Int8 (Y8) or Float16. VEC 4
// loads four channels of x at once (C % 4 == 0) and stores four Int8 outputs at once where y's
// row and channel offset allow; the weights ([C, KH, KW, 1], a few KB) come through the cache.
template <int KH, int KW, int VEC, bool Y8>
__device__ __forceinline__ void depthwise_i8(const StepPointers& ptrs, const ConvParams& p) {
  using Epi = EpilogueI8<Y8>;
  const Geo2 g = geo2(p);
  const int8_t* x = static_cast<const int8_t*>(ptrs.in[0]);
  const int8_t* w = static_cast<const int8_t*>(ptrs.in[1]);
  const typename Epi::Ctx ctx = Epi::context(ptrs, p, g.C);
  const int kvol = (KH > 0 ? KH : g.KH) * (KW > 0 ? KW : g.KW);
  const bool wide_store = Y8 && VEC == 4 && ctx.out.ldy % 4 == 0 && ctx.out.y0 % 4 == 0;
  depthwise_walk<KH, KW, VEC>(p, g, [&](int64_t pixel, int c0, auto taps) {
    int32_t acc[VEC] = {};
    taps([&](int64_t xo, int k) {
      int8_t xv[VEC];
      if (VEC == 4) {
        const char4 v4 = *reinterpret_cast<const char4*>(x + xo + c0);
        xv[0] = v4.x, xv[VEC > 1 ? 1 : 0] = v4.y, xv[VEC > 2 ? 2 : 0] = v4.z,
        xv[VEC > 3 ? 3 : 0] = v4.w;
      } else {
        xv[0] = x[xo + c0];
      }
#pragma unroll
      for (int v = 0; v < VEC; ++v) acc[v] += int32_t(xv[v]) * int32_t(w[(c0 + v) * kvol + k]);
    });
    const int64_t yi = pixel * g.C + c0;  // dense: the residual's
    const int64_t yo = ctx.out.at(int(pixel), c0);
    float v[VEC];
#pragma unroll
    for (int k = 0; k < VEC; ++k)
      v[k] = Epi::real(ctx, p, yi + k, ctx.epi[c0 + k], ctx.epi[g.C + c0 + k], acc[k]);
    if (Y8) {
      int8_t* y = static_cast<int8_t*>(ctx.out.y);
      int8_t q[VEC];
#pragma unroll
      for (int k = 0; k < VEC; ++k) q[k] = int8_quantize(v[k], p.int8.y_inv_scale);
      if (wide_store) {
        *reinterpret_cast<char4*>(y + yo) =
            make_char4(q[0], q[VEC > 1 ? 1 : 0], q[VEC > 2 ? 2 : 0], q[VEC > 3 ? 3 : 0]);
      } else {
#pragma unroll
        for (int k = 0; k < VEC; ++k) y[yo + k] = q[k];
      }
    } else {
      __half* y = static_cast<__half*>(ctx.out.y);
#pragma unroll
      for (int k = 0; k < VEC; ++k) y[yo + k] = __float2half_rn(v[k]);
    }
  });
}

// The compile-time kernel sizes (3x3, 5x5; any other at run time) of one VEC.
template <int VEC, bool Y8>
__device__ __forceinline__ void depthwise_i8_sized(const StepPointers& ptrs, const ConvParams& p) {
  const int kh = int(p.kernel[0]), kw = int(p.kernel[1]);
  if (kh == 3 && kw == 3) depthwise_i8<3, 3, VEC, Y8>(ptrs, p);
  else if (kh == 5 && kw == 5) depthwise_i8<5, 5, VEC, Y8>(ptrs, p);
  else depthwise_i8<0, 0, VEC, Y8>(ptrs, p);
}

// One depthwise INT8 step. The launch says how many channels a thread takes: four (C % 4 == 0)
// when it has no more blocks than pixels times C / 4 items need, else one (conv_select.cc
// chooses by the layer's size).
template <bool Y8>
__device__ __forceinline__ void depthwise_i8_step(const StepPointers& ptrs, const ConvParams& p) {
  if (!EpilogueI8<Y8>::fits(p) || !p.channels_last || p.groups != p.in_channels ||
      p.out_channels != p.in_channels || p.spatial_rank != 2)
    return;  // not a step this kernel fits (an untrusted plan)
  const int64_t work4 = p.batch * p.out_size[0] * p.out_size[1] * (p.in_channels / 4);
  if (p.in_channels % 4 == 0 && (work4 + blockDim.x - 1) / blockDim.x >= gridDim.x)
    depthwise_i8_sized<4, Y8>(ptrs, p);
  else depthwise_i8_sized<1, Y8>(ptrs, p);
}

// ------------------------------------------------------------------------ direct (any case)


// One thread per output element, FP32 sums: Float16 (T = __half) or Float32 tensors (Float32
// GPU plans: every conv form, 1-3 spatial dims, any groups).
template <typename T>
__device__ void direct(const StepPointers& ptrs, const ConvParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* w = static_cast<const T*>(ptrs.in[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[2]) : nullptr;
  const T* res = p.has_residual ? static_cast<const T*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  const ConvGeometry g = conv_geometry_3d(p);  // ranks 1 and 2 as 3 with leading unit dims
  const int64_t *in = g.in, *out = g.out, *ker = g.kernel, *st = g.stride, *dil = g.dilation,
                *pad = g.pad;
  const int64_t cin_g = p.in_channels / p.groups, cout_g = p.out_channels / p.groups;
  const int64_t kvol = ker[0] * ker[1] * ker[2];
  const int64_t total = p.batch * out[0] * out[1] * out[2] * p.out_channels;
  for (int64_t i = global_thread(); i < total; i += global_threads()) {
    const int64_t oc = i % p.out_channels;
    int64_t t = i / p.out_channels;
    const int64_t o2 = t % out[2];
    t /= out[2];
    const int64_t o1 = t % out[1];
    t /= out[1];
    const int64_t o0 = t % out[0];
    const int64_t n = t / out[0];
    const int64_t ic0 = (oc / cout_g) * cin_g;
    float acc = 0.f;
    for (int64_t k0 = 0; k0 < ker[0]; ++k0) {
      const int64_t i0 = o0 * st[0] - pad[0] + k0 * dil[0];
      if (i0 < 0 || i0 >= in[0]) continue;
      for (int64_t k1 = 0; k1 < ker[1]; ++k1) {
        const int64_t i1 = o1 * st[1] - pad[1] + k1 * dil[1];
        if (i1 < 0 || i1 >= in[1]) continue;
        for (int64_t k2 = 0; k2 < ker[2]; ++k2) {
          const int64_t i2 = o2 * st[2] - pad[2] + k2 * dil[2];
          if (i2 < 0 || i2 >= in[2]) continue;
          const int64_t xs = (((n * in[0] + i0) * in[1] + i1) * in[2] + i2) * p.in_channels + ic0;
          const int64_t ws = (oc * kvol + (k0 * ker[1] + k1) * ker[2] + k2) * cin_g;
          for (int64_t c = 0; c < cin_g; ++c) acc += load_float(x, xs + c) * load_float(w, ws + c);
        }
      }
    }
    if (p.has_bias) acc += load_float(bias, oc);
    store_float(y, y_index(p, i, oc),
                with_residual(
                    p, acc, [&](float a) { return a + load_float(res, i); },
                    [&](float a) { return activation_value(p.act, a); }));
  }
}

// FP32 implicit GEMM (Float32 GPU plans, groups 1, 1 to 3 spatial dims as direct()): M =
// N * output volume rows, N = Cout columns, K = kernel volume * Cin, on fp32_tile.cuh's tiles.
// Loads: a thread takes K element kk = tid % 16 of rows (and weight rows) tid / 16 + 16 e, so a
// warp reads 16 neighbouring channels of two pixels; each row's pixel is decoded once.
__device__ void igemm_f32(const StepPointers& ptrs, const ConvParams& p) {
  __shared__ F32Stage As, Bs;
  if (blockDim.x != kF32Threads || p.groups != 1) return;  // not its launch (an untrusted plan)
  const float* x = static_cast<const float*>(ptrs.in[0]);
  const float* w = static_cast<const float*>(ptrs.in[1]);
  const float* bias = p.has_bias ? static_cast<const float*>(ptrs.in[2]) : nullptr;
  const float* res = p.has_residual ? static_cast<const float*>(ptrs.in[p.has_bias ? 3 : 2]) : nullptr;
  float* y = static_cast<float*>(ptrs.out[0]);
  const ConvGeometry g = conv_geometry_3d(p);  // ranks 1 and 2 as 3 with leading unit dims
  const int64_t *in = g.in, *out = g.out, *ker = g.kernel, *st = g.stride, *dil = g.dilation,
                *pad = g.pad;
  const int64_t cin = p.in_channels, N = p.out_channels, K = ker[0] * ker[1] * ker[2] * cin;
  const int64_t M = p.batch * out[0] * out[1] * out[2];
  const int tid = int(threadIdx.x), kl = tid % kF32K, rq = tid / kF32K;
  const int64_t m0 = int64_t(blockIdx.x) * kF32Tile, n0 = int64_t(blockIdx.y) * kF32Tile;
  // This thread's four A rows: batch entry and the window's first input position.
  int64_t rn[4], rb[4][3];
  bool rok[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const int64_t m = m0 + rq + 16 * e;
    rok[e] = m < M;
    int64_t t = rok[e] ? m : 0;
    const int64_t o2 = t % out[2];
    t /= out[2];
    const int64_t o1 = t % out[1];
    t /= out[1];
    rb[e][0] = (t % out[0]) * st[0] - pad[0];
    rb[e][1] = o1 * st[1] - pad[1];
    rb[e][2] = o2 * st[2] - pad[2];
    rn[e] = t / out[0];
  }
  float acc[4][4] = {};
  f32_tile_k_loop(As, Bs, K, rq, kl, [&](int64_t k0) {
    const int64_t k = k0 + kl;
    const bool kok = k < K;
    const int64_t c = k % cin, tap = k / cin;
    const int64_t t2 = tap % ker[2], t1 = (tap / ker[2]) % ker[1], t0 = tap / (ker[2] * ker[1]);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t i0 = rb[e][0] + t0 * dil[0], i1 = rb[e][1] + t1 * dil[1],
                    i2 = rb[e][2] + t2 * dil[2];
      const bool inside = kok && rok[e] && i0 >= 0 && i0 < in[0] && i1 >= 0 && i1 < in[1] &&
                          i2 >= 0 && i2 < in[2];
      As[kl][rq + 16 * e] = inside ? x[(((rn[e] * in[0] + i0) * in[1] + i1) * in[2] + i2) * cin + c] : 0.f;
      const int64_t n = n0 + rq + 16 * e;
      Bs[kl][rq + 16 * e] = kok && n < N ? w[n * K + k] : 0.f;
    }
  }, acc);
  f32_tile_store(m0, n0, rq, kl, M, N, acc, [&](int64_t m, int64_t n, float v) {
    if (bias != nullptr) v += bias[n];
    y[y_index(p, m * N + n, n)] = with_residual(
        p, v, [&](float a) { return a + res[m * N + n]; },
        [&](float a) { return activation_value(p.act, a); });
  });
}

// The Hopper tiles' body: the igemm in IgemmWg tiles where compiled for sm_90a, and elsewhere
// only the wait every step kernel makes (no plan for another GPU names these kernels).
template <typename E, typename Epi, int BM, int ST, int INFLIGHT>
__device__ __forceinline__ void igemm_wg(const StepPointers& ptrs, const ConvParams& p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  igemm<IgemmWg<E, BM, ST, INFLIGHT>, Epi>(ptrs, p);
#else
  pdl_wait();
#endif
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ConvParams;
using jetplan::kernels::cuda::StepPointers;
namespace jk = jetplan::kernels::cuda;

// Block shapes and shared memory of these rows: the rows in kernels/conv.h repeat them
// (Igemm::kSharedBytes: the pipeline's STAGES * (BM + BN) * (BK + one 16-byte chunk) bytes of
// elements, or the epilogue's staged tile where larger); the GPU tests launch every row with
// exactly those numbers.
// MINB: the CTAs an SM the row's registers must allow (__launch_bounds__). The 256-thread
// (128x128) tiles are held to 128 registers, two CTAs an SM: left to itself, ptxas gave them 162
// once igemm()'s pointwise form joined the general one (one CTA an SM, 10-25% slower). Holding
// the 128-thread tiles to their former 56-96 registers as well made ResNet-50 at batch 1 6%
// and EfficientNet-B0 4% slower than leaving them free (H200, session 15), so those have none,
// but for the INT8 64x64 ones, held to as many CTAs as their shared memory allows (unbounded at
// 118 and 144 registers, ResNet-50 INT8 at batch 8 was 5% slower).
#define JP_CONV_IGEMM(name, threads, MINB, E, BM, BN, BK, WM, WN, ST, VEC, Epi)              \
  extern "C" __global__ void __launch_bounds__(threads, MINB) name(                          \
      StepPointers ptrs, const ConvParams p) {                                                \
    jk::igemm<jk::Igemm<E, BM, BN, BK, WM, WN, ST, VEC>, Epi>(ptrs, p);                      \
  }
#define JP_CONV_IGEMM_HALF(name, threads, MINB, E, BM, BN, BK, WM, WN, ST, Epi)             \
  extern "C" __global__ void __launch_bounds__(threads, MINB) name(                          \
      StepPointers ptrs, const ConvParams p) {                                                \
    jk::igemm<jk::Igemm<E, BM, BN, BK, WM, WN, ST, true, true>, Epi>(ptrs, p);               \
  }
JP_CONV_IGEMM(jp_conv_igemm_128x128_f16, 256, 2, __half, 128, 128, 32, 2, 4, 3, true, jk::EpilogueF16Gelu)
JP_CONV_IGEMM(jp_conv_igemm_64x64_f16, 128, 1, __half, 64, 64, 32, 2, 2, 4, true, jk::EpilogueF16)
JP_CONV_IGEMM(jp_conv_igemm_32x64_f16, 128, 1, __half, 32, 64, 32, 1, 4, 4, true, jk::EpilogueF16)
JP_CONV_IGEMM(jp_conv_igemm_32x64k64_f16, 128, 1, __half, 32, 64, 64, 1, 4, 3, true, jk::EpilogueF16)
// 64 K a stage: half the barriers and pipeline waits per mma of the 32-K tiles. The 128x128
// one takes 108 KiB of shared memory (sm_87 and sm_90; conv_select.cc falls back to the 32-K
// one on targets of less).
JP_CONV_IGEMM(jp_conv_igemm_128x128k64_f16, 256, 2, __half, 128, 128, 64, 2, 4, 3, true, jk::EpilogueF16Gelu)
JP_CONV_IGEMM(jp_conv_igemm_64x64k64_f16, 128, 1, __half, 64, 64, 64, 2, 2, 4, true, jk::EpilogueF16)
JP_CONV_IGEMM(jp_conv_igemm_64x64_anyc_f16, 128, 1, __half, 64, 64, 32, 2, 2, 4, false, jk::EpilogueF16)
// INT8: 64 K a stage (the same bytes a stage as the FP16 tiles' 32).
JP_CONV_IGEMM(jp_conv_igemm_128x128_i8, 256, 2, int8_t, 128, 128, 64, 2, 4, 3, true, jk::EpilogueI8<true>)
JP_CONV_IGEMM(jp_conv_igemm_64x64_i8, 128, 5, int8_t, 64, 64, 64, 2, 2, 4, true, jk::EpilogueI8<true>)
JP_CONV_IGEMM(jp_conv_igemm_32x64_i8, 128, 1, int8_t, 32, 64, 64, 1, 4, 4, true, jk::EpilogueI8<true>)
JP_CONV_IGEMM(jp_conv_igemm_32x64k128_i8, 128, 1, int8_t, 32, 64, 128, 1, 4, 3, true, jk::EpilogueI8<true>)
JP_CONV_IGEMM(jp_conv_igemm_128x128_i8_f16out, 256, 2, int8_t, 128, 128, 64, 2, 4, 3, true, jk::EpilogueI8<false>)
JP_CONV_IGEMM(jp_conv_igemm_64x64_i8_f16out, 128, 5, int8_t, 64, 64, 64, 2, 2, 4, true, jk::EpilogueI8<false>)
JP_CONV_IGEMM(jp_conv_igemm_32x64_i8_f16out, 128, 1, int8_t, 32, 64, 64, 1, 4, 4, true, jk::EpilogueI8<false>)
JP_CONV_IGEMM(jp_conv_igemm_32x64k128_i8_f16out, 128, 1, int8_t, 32, 64, 128, 1, 4, 3, true, jk::EpilogueI8<false>)
// Cin a multiple of 8, not 16 (EfficientNet's and MobileNetV2's 24- and 40-channel inputs):
// 16-byte chunks loaded as two 8-byte halves.
JP_CONV_IGEMM_HALF(jp_conv_igemm_32x64_c8_i8, 128, 1, int8_t, 32, 64, 64, 1, 4, 4, jk::EpilogueI8<true>)
JP_CONV_IGEMM_HALF(jp_conv_igemm_32x64_c8_i8_f16out, 128, 1, int8_t, 32, 64, 64, 1, 4, 4, jk::EpilogueI8<false>)
// The same in 64-row tiles (warp tiles of 32x32) where those fill the SMs twice: the RGB stem
// padded to 8 channels at batch 8 (1568 tiles, each reading all its weights) 33.7 us against
// 43.4 in 32-row ones, 128-row ones 33.0 but 1.7-2.4x slower on the 24- and 40-channel
// expansions (H100, session 27: tests/perf/RESULTS.md).
JP_CONV_IGEMM_HALF(jp_conv_igemm_64x64_c8_i8, 128, 1, int8_t, 64, 64, 64, 2, 2, 4, jk::EpilogueI8<true>)
JP_CONV_IGEMM_HALF(jp_conv_igemm_64x64_c8_i8_f16out, 128, 1, int8_t, 64, 64, 64, 2, 2, 4, jk::EpilogueI8<false>)
// 64x64 with 128 K a stage: the many-tile layers with long K.
JP_CONV_IGEMM(jp_conv_igemm_64x64k128_i8, 128, 4, int8_t, 64, 64, 128, 2, 2, 3, true, jk::EpilogueI8<true>)
JP_CONV_IGEMM(jp_conv_igemm_64x64k128_i8_f16out, 128, 4, int8_t, 64, 64, 128, 2, 2, 3, true, jk::EpilogueI8<false>)
// Grouped convs (conv_grouped_igemm_fits): each N tile over the channels of its own groups.
// A loads of 8 elements: whole 16-byte chunks of halves, 8-byte halves of INT8 chunks (HALF).
#define JP_CONV_IGEMM_GROUPED(name, MINB, E, BM, BN, BK, WM, WN, ST, HALF, Epi)             \
  extern "C" __global__ void __launch_bounds__(128, MINB) name(StepPointers ptrs,            \
                                                               const ConvParams p) {          \
    jk::igemm<jk::Igemm<E, BM, BN, BK, WM, WN, ST, true, HALF>, Epi, true>(ptrs, p);         \
  }
JP_CONV_IGEMM_GROUPED(jp_conv_igemm_64x64_grouped_f16, 1, __half, 64, 64, 32, 2, 2, 4, false, jk::EpilogueF16)
JP_CONV_IGEMM_GROUPED(jp_conv_igemm_32x64_grouped_f16, 1, __half, 32, 64, 32, 1, 4, 4, false, jk::EpilogueF16)
JP_CONV_IGEMM_GROUPED(jp_conv_igemm_32x64_grouped_i8, 1, int8_t, 32, 64, 64, 1, 4, 4, true, jk::EpilogueI8<true>)
JP_CONV_IGEMM_GROUPED(jp_conv_igemm_32x64_grouped_i8_f16out, 1, int8_t, 32, 64, 64, 1, 4, 4, true, jk::EpilogueI8<false>)
// The Hopper tiles (IgemmWg: wgmma from swizzled shared memory, kernels/cuda/wgmma.cuh), an
// extra of sm_90 targets: their rows say sm_only 90 (conv_select.cc picks them for those
// targets only, load refuses them on other GPUs), and their bodies are empty but for sm_90a.
// FP16, groups 1, the general and pointwise forms, split-K and the epilogue as the tiles above.
// MINB: CTAs an SM, as many as the shared memory allows (2 of 97 KiB). INFLIGHT (IgemmWg): one
// stage's wgmma steps in flight while the next stage's are issued, so loads run a stage less
// ahead: 4 stages, 2 ahead, in the 64-row tiles, 10-20% faster than none in flight on most
// layers of the H100 tables (tests/perf/RESULTS.md, session 30); _p, 3 stages and 1 ahead in
// the 128-row tiles, benched for the selector, not selected. With 4 stages the 128-row tiles
// (129 KiB, one CTA an SM) were slower with a stage in flight or without.
#define JP_CONV_IGEMM_WG(name, MINB, E, BM, ST, INFLIGHT, Epi)                               \
  extern "C" __global__ void __launch_bounds__(BM * 2, MINB) name(StepPointers ptrs,         \
                                                                 const ConvParams p) {       \
    jk::igemm_wg<E, Epi, BM, ST, INFLIGHT>(ptrs, p);                                         \
  }
JP_CONV_IGEMM_WG(jp_conv_igemm_wg128x128_f16, 2, __half, 128, 3, 0, jk::EpilogueF16Gelu)
JP_CONV_IGEMM_WG(jp_conv_igemm_wg128x128p_f16, 2, __half, 128, 3, 1, jk::EpilogueF16Gelu)
JP_CONV_IGEMM_WG(jp_conv_igemm_wg64x128_f16, 2, __half, 64, 4, 1, jk::EpilogueF16Gelu)
// INT8 (s8 wgmma, 128 K a stage; Cin a multiple of 16), into Int8 and into Float16: in the GPU
// tests and benches, not selected (slower as a whole plan: select_conv_int8, conv_select.cc).
JP_CONV_IGEMM_WG(jp_conv_igemm_wg128x128_i8, 2, int8_t, 128, 3, 0, jk::EpilogueI8<true>)
JP_CONV_IGEMM_WG(jp_conv_igemm_wg128x128_i8_f16out, 2, int8_t, 128, 3, 0, jk::EpilogueI8<false>)
JP_CONV_IGEMM_WG(jp_conv_igemm_wg64x128_i8, 2, int8_t, 64, 4, 1, jk::EpilogueI8<true>)
JP_CONV_IGEMM_WG(jp_conv_igemm_wg64x128_i8_f16out, 2, int8_t, 64, 4, 1, jk::EpilogueI8<false>)
#undef JP_CONV_IGEMM
#undef JP_CONV_IGEMM_HALF
#undef JP_CONV_IGEMM_GROUPED
#undef JP_CONV_IGEMM_WG
// The stem kernels (conv_stem.cuh): 128 threads, N tiles of 32 or 64 output channels; they
// check their dynamic shared memory (ConvStemLayout::bytes) themselves. Registers: the
// 32-channel one held to 80 (six CTAs an SM; no spills at sm_90, 20 bytes at sm_87), the
// 64-channel one 168 (three; held to 128 it spills).
extern "C" __global__ void __launch_bounds__(128, 6) jp_conv_stem_n32_f16(StepPointers ptrs,
                                                                       const ConvParams p) {
  jk::conv_stem<32>(ptrs, p);
}
extern "C" __global__ void __launch_bounds__(128) jp_conv_stem_n64_f16(StepPointers ptrs,
                                                                       const ConvParams p) {
  jk::conv_stem<64>(ptrs, p);
}
// The tiled depthwise kernels (conv_depthwise.cuh), one a window: blocks of at most 256.
// AHEAD: the next kernel row of x is loaded while one is summed (conv_depthwise.cuh). The 7x7
// FP16 kernel loads a row, then sums it: 90 registers where loading ahead took 128 (and
// spilled), 2-6% faster on ConvNeXt-T's layers (H200, GpuConvBench.DISABLED_DepthwiseVariants).
// jp_conv_dw3_1row_i8[_f16out]: the 3x3 INT8 kernels the same way, for the large layers
// (conv_select.cc).
#define JP_CONV_DW(name, E, K, Out, AHEAD)                                              \
  extern "C" __global__ void __launch_bounds__(256) name(StepPointers ptrs,              \
                                                         const ConvParams p) {           \
    jk::dw_tiled<E, K, Out, AHEAD>(ptrs, p);                                             \
  }
JP_CONV_DW(jp_conv_dw3_f16, __half, 3, jk::DwOutF16, true)
JP_CONV_DW(jp_conv_dw5_f16, __half, 5, jk::DwOutF16, true)
JP_CONV_DW(jp_conv_dw7_f16, __half, 7, jk::DwOutF16, false)
JP_CONV_DW(jp_conv_dw3_i8, int8_t, 3, jk::DwOutI8<true>, true)
JP_CONV_DW(jp_conv_dw3_1row_i8, int8_t, 3, jk::DwOutI8<true>, false)
JP_CONV_DW(jp_conv_dw5_i8, int8_t, 5, jk::DwOutI8<true>, true)
JP_CONV_DW(jp_conv_dw7_i8, int8_t, 7, jk::DwOutI8<true>, true)
JP_CONV_DW(jp_conv_dw3_i8_f16out, int8_t, 3, jk::DwOutI8<false>, true)
JP_CONV_DW(jp_conv_dw3_1row_i8_f16out, int8_t, 3, jk::DwOutI8<false>, false)
JP_CONV_DW(jp_conv_dw5_i8_f16out, int8_t, 5, jk::DwOutI8<false>, true)
JP_CONV_DW(jp_conv_dw7_i8_f16out, int8_t, 7, jk::DwOutI8<false>, true)
#undef JP_CONV_DW
// The depthwise and direct kernels launch early (their rows: early_launch) and wait for the
// previous kernel first thing: their weights are small next to x.
extern "C" __global__ void jp_conv_depthwise_f16(StepPointers ptrs, const ConvParams p) {
  jk::pdl_wait();
  jk::pdl_trigger();
  if (!p.channels_last || p.groups != p.in_channels || p.out_channels != p.in_channels ||
      p.spatial_rank > 2)
    return;  // not a step this kernel fits (an untrusted plan)
  const int kh = p.spatial_rank == 2 ? int(p.kernel[0]) : 1;
  const int kw = int(p.kernel[p.spatial_rank == 2 ? 1 : 0]);
  if (kh == 3 && kw == 3) jk::depthwise<3, 3>(ptrs, p);
  else if (kh == 5 && kw == 5) jk::depthwise<5, 5>(ptrs, p);
  else jk::depthwise<0, 0>(ptrs, p);
}
extern "C" __global__ void jp_conv_depthwise_i8(StepPointers ptrs, const ConvParams p) {
  jk::pdl_wait();
  jk::pdl_trigger();
  jk::depthwise_i8_step<true>(ptrs, p);
}
extern "C" __global__ void jp_conv_depthwise_i8_f16out(StepPointers ptrs, const ConvParams p) {
  jk::pdl_wait();
  jk::pdl_trigger();
  jk::depthwise_i8_step<false>(ptrs, p);
}
extern "C" __global__ void jp_conv_direct_f16(StepPointers ptrs, const ConvParams p) {
  jk::pdl_wait();
  jk::pdl_trigger();
  if (!p.channels_last || p.int8.enabled) return;  // not this kernel's step (an untrusted plan)
  jk::direct<__half>(ptrs, p);
}
// Float32 GPU plans (--precision fp32): the FP32 implicit GEMM for groups 1 (verified on an H100,
// session 28), the direct kernel for the rest.
extern "C" __global__ void __launch_bounds__(256) jp_conv_igemm_f32(StepPointers ptrs,
                                                                    const ConvParams p) {
  jk::pdl_wait();
  jk::pdl_trigger();
  if (!p.channels_last || p.int8.enabled) return;  // not this kernel's step (an untrusted plan)
  jk::igemm_f32(ptrs, p);
}
extern "C" __global__ void jp_conv_direct_f32(StepPointers ptrs, const ConvParams p) {
  jk::pdl_wait();
  jk::pdl_trigger();
  if (!p.channels_last || p.int8.enabled) return;  // not this kernel's step (an untrusted plan)
  jk::direct<float>(ptrs, p);
}
