// The tiled depthwise conv of the Conv family (kernels/cuda/conv.cu: jp_conv_dw<K>_*), one
// template for FP16 (FP32 sums, the twin's) and INT8 (exact int32 sums) over NHWC:
//
//   a thread      8 channels (one 16-byte x load of halves, 8 bytes of Int8) of one output
//                 pixel: a kernel row's K columns are loaded while the row before is summed
//                 (AHEAD), or loaded and then summed (half the registers for x);
//   a block       blockDim.x channel groups of 8 by blockDim.y pixels; its channels' weights
//                 are staged once in dynamic shared memory as [K * K][8 * blockDim.x] FP32 or
//                 int32 values (a tap's 8 channels two 16-byte loads, nothing to convert),
//                 before the wait for the previous kernel when w is a plan weight, and the
//                 blocks then stride over the pixels;
//   indexing      32-bit, one set of divisions a pixel (the previous kernels' per-element 64-bit
//                 divisions were most of their instructions).
//
// One kernel per window (3x3 and 5x5 at stride 1 or 2, 7x7 at stride 1; dilation 1, C % 8 ==
// 0: MobileNet, EfficientNet, ConvNeXt), so that each gets the registers its own window needs;
// other depthwise convs run on jp_conv_depthwise_*. The output stage is the caller's
// (Out::channel, the constants of a thread's 8 channels; Out::store<A>: bias / INT8 epilogue,
// residual, activation A, channel slice), and so is the element type's (DwElem).
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/cuda/conv_igemm.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kDwVec = 8;  // channels a thread

template <typename E>
struct DwElem;
template <>
struct DwElem<__half> {
  using Acc = float;
  using Raw = uint4;  // 8 halves
  static __device__ __forceinline__ void widen(const Raw& r, float (&v)[kDwVec]) {
    const __half2* h = reinterpret_cast<const __half2*>(&r);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h[i]);
      v[2 * i] = f.x, v[2 * i + 1] = f.y;
    }
  }
};
template <>
struct DwElem<int8_t> {
  using Acc = int32_t;
  using Raw = uint2;  // 8 Int8
  static __device__ __forceinline__ void widen(const Raw& r, int32_t (&v)[kDwVec]) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[i] = int32_t(r.x << (24 - 8 * i)) >> 24;
      v[4 + i] = int32_t(r.y << (24 - 8 * i)) >> 24;
    }
  }
};

// Output pixel (n, oh, ow), channels c0..c0+7. Rows outside x load nothing and add nothing.
// AHEAD: a kernel row's K columns are loaded while the row before is summed (twice the
// registers for x); otherwise each row is loaded, then summed.
template <typename E, int K, int S, typename Out, int A, bool AHEAD>
__device__ __forceinline__ void dw_pixel(const StepPointers& ptrs, const ConvParams& p,
                                         const Geo2& g, const typename DwElem<E>::Acc* sw,
                                         const typename Out::Ctx& ctx,
                                         const typename Out::Chan& chan, int n, int oh, int ow,
                                         int c0, int ldw) {
  using D = DwElem<E>;
  using Acc = typename D::Acc;
  using Raw = typename D::Raw;
  const E* x = static_cast<const E*>(ptrs.in[0]);
  const int iw0 = ow * S - g.pw, ih0 = oh * S - g.ph;
  auto load_row = [&](int kh, Raw (&cols)[K]) {
    const int ih = ih0 + kh;
    const bool ok = ih >= 0 && ih < g.H;
    const E* row = x + (int64_t(n) * g.H + (ok ? ih : 0)) * g.W * g.C + c0;
#pragma unroll
    for (int kw = 0; kw < K; ++kw) {
      const int iw = iw0 + kw;
      cols[kw] = Raw{};
      if (ok && iw >= 0 && iw < g.W)
        cols[kw] = __ldg(reinterpret_cast<const Raw*>(row + int64_t(iw) * g.C));
    }
  };
  Acc acc[kDwVec];
#pragma unroll
  for (int e = 0; e < kDwVec; ++e) acc[e] = Acc(0);
  Raw cur[K], next[K];
  load_row(0, cur);
#pragma unroll
  for (int kh = 0; kh < K; ++kh) {
    if (AHEAD && kh + 1 < K) load_row(kh + 1, next);
    if (!AHEAD && kh > 0) load_row(kh, cur);
    if (ih0 + kh >= 0 && ih0 + kh < g.H) {
#pragma unroll
      for (int kw = 0; kw < K; ++kw) {
        Acc xv[kDwVec], wv[kDwVec];
        D::widen(cur[kw], xv);
        const Acc* wt = sw + (kh * K + kw) * ldw;
        *reinterpret_cast<uint4*>(wv) = *reinterpret_cast<const uint4*>(wt);
        *reinterpret_cast<uint4*>(wv + 4) = *reinterpret_cast<const uint4*>(wt + 4);
#pragma unroll
        for (int e = 0; e < kDwVec; ++e) acc[e] += xv[e] * wv[e];
      }
    }
    if (AHEAD && kh + 1 < K) {
#pragma unroll
      for (int kw = 0; kw < K; ++kw) cur[kw] = next[kw];
    }
  }
  Out::template store<A>(ctx, chan, p, (int64_t(n) * g.OH + oh) * g.OW + ow, c0, acc);
}

// One step: blockDim.x channel groups of 8 by blockDim.y pixels; grid.y covers the channel
// groups, grid.x blocks stride over the pixels. The block stages its weights once, widened
// (Acc: the products need no conversion of w); a thread's channels never change, so it reads
// their epilogue constants once (Out::channel), and the activation is the step's at compile
// time for the common kinds (with_activation). Dynamic shared memory: K * K * 8 * blockDim.x
// Accs.
template <typename E, int K, int S, typename Out, bool AHEAD>
__device__ __forceinline__ void dw_tiled_sized(const StepPointers& ptrs, const ConvParams& p) {
  using Acc = typename DwElem<E>::Acc;
  extern __shared__ __align__(16) unsigned char dw_smem[];
  Acc* sw = reinterpret_cast<Acc*>(dw_smem);
  const Geo2 g = geo2(p);
  const int ldw = kDwVec * int(blockDim.x);  // channels of the block
  const int cb0 = int(blockIdx.y) * ldw;
  const E* w = static_cast<const E*>(ptrs.in[1]);
  const int tid = threadIdx.y * blockDim.x + threadIdx.x, nthreads = blockDim.x * blockDim.y;
  auto stage = [&] {
    // w is [C, K, K]: a thread takes a channel's K * K taps (contiguous, all loads in flight) to
    // sw[k][c - cb0]; channels past C are zero.
    for (int ch = tid; ch < ldw; ch += nthreads) {
      const int c = cb0 + ch;
      const E* wc = w + int64_t(c < g.C ? c : 0) * (K * K);
#pragma unroll
      for (int k = 0; k < K * K; ++k) sw[k * ldw + ch] = c < g.C ? Acc(wc[k]) : Acc(0);
    }
  };
  if (p.w_constant) stage();
  pdl_wait();
  pdl_trigger();
  if (!p.w_constant) stage();
  __syncthreads();
  const int c0 = cb0 + kDwVec * int(threadIdx.x);
  if (c0 >= g.C) return;
  const typename Out::Ctx ctx = Out::context(ptrs, p, g.C);
  const typename Out::Chan chan = Out::channel(ctx, p, c0);
  const int64_t pixels = int64_t(p.batch) * g.OH * g.OW;  // < 2^31: conv_dw_tiled_fits
  const int64_t step = int64_t(gridDim.x) * blockDim.y;
  with_activation(p.act, [&](auto a) {
    for (int64_t m = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; m < pixels; m += step) {
      const int ow = int(m) % g.OW, t = int(m) / g.OW;
      dw_pixel<E, K, S, Out, decltype(a)::value, AHEAD>(ptrs, p, g, sw + kDwVec * threadIdx.x, ctx,
                                                  chan, t / g.OH, t % g.OH, ow, c0, ldw);
    }
  });
}

// The kernel body of window K: its strides (conv_dw_tiled_fits, kernels/conv.h), after checking
// the step is one it takes and the launch gives the shared memory it needs (a plan is untrusted).
template <typename E, int K, typename Out, bool AHEAD>
__device__ __forceinline__ void dw_tiled(const StepPointers& ptrs, const ConvParams& p) {
  if (!conv_dw_tiled_fits(p) || p.kernel[0] != K || !Out::fits(p) ||
      uint64_t(K * K) * kDwVec * blockDim.x * sizeof(typename DwElem<E>::Acc) >
          dynamic_smem_bytes()) {
    pdl_wait();
    return;
  }
  if (p.stride[0] == 1) dw_tiled_sized<E, K, 1, Out, AHEAD>(ptrs, p);
  else if (K != 7) dw_tiled_sized<E, K, 2, Out, AHEAD>(ptrs, p);
  else pdl_wait();  // 7x7 at stride 2: not a step the tiled kernels take
}

}  // namespace
}  // namespace jetplan::kernels::cuda
