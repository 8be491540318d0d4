// The epilogue of the implicit-GEMM tiles (conv_igemm.cuh): a tile's accumulators through shared
// memory to groups of four output channels of a row, each finished by the caller's Epi
// (EpilogueF16 and EpilogueI8 in conv.cu, EpilogueUpsample in conv_transpose.cu). T is the
// tile's Igemm traits.
#pragma once

#include <cuda_fp16.h>
#include <cstdint>
#include <type_traits>

#include "kernels/conv.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

// ---- Groups of four, for the epilogues of conv.cu and conv_transpose.cu (residual, store4)
// Four consecutive elements of a dense tensor as floats (exact conversions), from element i on;
// those at or past `count` left alone. One 4- or 8-byte load when all four exist and i is a
// multiple of 4 (the igemm epilogue's groups start on one; arena tensors are 16-byte aligned).
// FAST: the caller knows both (igemm_epilogue()'s whole, aligned tiles), so nothing is tested.
template <bool FAST, typename T>
__device__ __forceinline__ void load4(const T* src, int64_t i, int count, float (&r)[4]) {
  if (FAST || (count >= 4 && i % 4 == 0)) {
    if (sizeof(T) == 1) {
      const char4 v = *reinterpret_cast<const char4*>(src + i);
      r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
    } else {
      const uint2 v = *reinterpret_cast<const uint2*>(src + i);
      const __half2 lo = *reinterpret_cast<const __half2*>(&v.x);
      const __half2 hi = *reinterpret_cast<const __half2*>(&v.y);
      r[0] = __low2float(lo), r[1] = __high2float(lo), r[2] = __low2float(hi),
      r[3] = __high2float(hi);
    }
    return;
  }
  if constexpr (!FAST) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < count) r[e] = sizeof(T) == 1 ? float(src[i + e]) : __half2float(src[i + e]);
  }
}
// Stores the first min(count, 4) of four Int8 or Float16 values at y[o]: one 4- or 8-byte
// store when all four go and o is a multiple of 4 (FAST: known to be so).
template <bool FAST>
__device__ __forceinline__ void store4_int8(int8_t* y, int64_t o, int count, const int8_t (&q)[4]) {
  if (FAST || (count >= 4 && o % 4 == 0)) {
    *reinterpret_cast<char4*>(y + o) = make_char4(q[0], q[1], q[2], q[3]);
    return;
  }
  if constexpr (!FAST) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < count) y[o + e] = q[e];
  }
}
template <bool FAST>
__device__ __forceinline__ void store4_half(__half* y, int64_t o, int count, const float (&v)[4]) {
  if (FAST || (count >= 4 && o % 4 == 0)) {
    const __half2 lo = __floats2half2_rn(v[0], v[1]), hi = __floats2half2_rn(v[2], v[3]);
    uint2 u;
    u.x = *reinterpret_cast<const uint32_t*>(&lo);
    u.y = *reinterpret_cast<const uint32_t*>(&hi);
    *reinterpret_cast<uint2*>(y + o) = u;
    return;
  }
  if constexpr (!FAST) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < count) y[o + e] = __float2half_rn(v[e]);
  }
}

// The epilogue of one tile, in two passes through shared memory (the pipeline's, free by then).
// 1: each accumulator gets its column's part of the epilogue (Epi::staged: the bias, or INT8's
//    multiplier and shift; Epi::column loads a thread's columns once, all before the first
//    store) and lands in a [BM][BN + 8] float tile.
// 2: each thread takes groups of four channels of one output row, so that a warp's residual
//    loads and output stores are contiguous runs of rows (4- to 8-byte accesses) rather than
//    2-element pieces of 8 rows; every residual group the thread needs is loaded before its first
//    store (a store may alias them as far as the compiler knows, which would serialise one global
//    round trip per element), then Epi::store4 finishes and writes each group, with the
//    activation kind known at compile time where it is a common one (with_activation()).
// The operations and their order are the per-element epilogue's: the bits do not change.
template <typename T, typename Epi>
__device__ __forceinline__ void igemm_epilogue(const typename T::Acc (&acc)[T::kMI][T::kNI][4],
                                               const StepPointers& ptrs, const ConvParams& p,
                                               int M, int N, int m0, int n0, int wm, int wn,
                                               int tid) {
  extern __shared__ __align__(16) unsigned char igemm_smem[];
  float* tile = reinterpret_cast<float*>(igemm_smem);
  constexpr int kP = T::kEpiPitch;
  const int lane = tid & 31;
  const typename Epi::Ctx ctx = Epi::context(ptrs, p, N);
  typename Epi::Col cols[T::kNI];
#pragma unroll
  for (int ni = 0; ni < T::kNI; ++ni)
    cols[ni] = Epi::column(ctx, p, n0 + wn + ni * 8 + (lane & 3) * 2, N);
  __syncthreads();  // every warp is done reading the pipeline's stages
#pragma unroll
  for (int mi = 0; mi < T::kMI; ++mi)
#pragma unroll
    for (int ni = 0; ni < T::kNI; ++ni)
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int r = wm + mi * 16 + (lane >> 2) + hr * 8, c = wn + ni * 8 + (lane & 3) * 2;
        *reinterpret_cast<float2*>(tile + r * kP + c) =
            make_float2(Epi::staged(p, cols[ni], 0, acc[mi][ni][hr * 2]),
                        Epi::staged(p, cols[ni], 1, acc[mi][ni][hr * 2 + 1]));
      }
  __syncthreads();
  // Groups of at most 8 a thread at a time keep the residuals' registers within the
  // accumulators' (the 128x128 tiles have 16 a thread).
  constexpr int kQuads = T::kBN / 4, kPer = T::kBM * kQuads / T::kThreads;
  constexpr int kBatch = kPer < 8 ? kPer : 8;
  static_assert(kPer % kBatch == 0, "whole batches");
  // A whole tile whose groups all start aligned (every tile but the edges of most layers) goes
  // without a bounds or alignment test per group: those branches were a third of the INT8
  // epilogue's instructions (ncu, ResNet-50's 1x1 layers).
  const bool fast = m0 + T::kBM <= M && n0 + T::kBN <= N && Epi::aligned4(ctx, p, N);
  auto groups = [&](auto act, auto fast_kind) {
    constexpr bool kFast = decltype(fast_kind)::value;
#pragma unroll
    for (int b = 0; b < kPer; b += kBatch) {
      float res[kBatch][4];
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int q = tid + (b + i) * T::kThreads, m = m0 + q / kQuads, n = n0 + (q % kQuads) * 4;
        Epi::template residual<kFast>(ctx, p, kFast || (m < M && n < N), m, n, N, res[i]);
      }
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        const int q = tid + (b + i) * T::kThreads, m = m0 + q / kQuads, n = n0 + (q % kQuads) * 4;
        if (!kFast && (m >= M || n >= N)) continue;
        const float4 v =
            *reinterpret_cast<const float4*>(tile + (q / kQuads) * kP + (q % kQuads) * 4);
        Epi::template store4<decltype(act)::value, kFast>(ctx, p, m, n, N, v, res[i]);
      }
    }
  };
  // Gelu inlined where Epi asks for it (kExtendedActivations), on whole tiles only: the edge
  // tiles take it out of line, which keeps the code of the tiles' rare path small.
  with_activation<Epi::kExtendedActivations>(p.act, [&](auto act) {
    constexpr int kA = decltype(act)::value;
    if (fast) groups(act, std::true_type{});
    else groups(ActKind<kExtendedActivation<kA> ? -1 : kA>{}, std::false_type{});
  });
}

}  // namespace
}  // namespace jetplan::kernels::cuda
