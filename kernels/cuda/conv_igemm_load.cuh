// The loads of the Conv family's implicit-GEMM kernels (kernels/cuda/conv_igemm.cuh): the 2-D
// geometry, the tile shapes, and one pipeline stage's cp.async loads of A (the im2col rows of x)
// and B (the rows of w) into shared memory, in the general, pointwise and grouped forms. The
// loads are written in 16-byte chunks (8 halves or 16 int8), as the main loop reads them.
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/conv.h"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0));
}
// 8 bytes (the .ca form: .cg moves 16 only); src_size 0 zero-fills.
__device__ __forceinline__ void cp_async8(uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 8 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// The 2-D geometry the igemm and depthwise kernels use (rank 1 maps to H = 1).
// C: the input channels K runs over; CS: x's channels a pixel (C, but for the grouped form,
// whose tiles each run over the channels of their own groups).
struct Geo2 {
  int H, W, C, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw, CS;
};
__device__ __forceinline__ Geo2 geo2(const ConvParams& p) {
  Geo2 g;
  const bool r1 = p.spatial_rank == 1;
  // One window field's (H, W) pair: rank 1 has only W, and H is `h1` (1, or 0 for a padding).
  const auto hw = [r1](const int64_t* field, int h1, int* h, int* w) {
    *h = r1 ? h1 : int(field[0]);
    *w = int(field[r1 ? 0 : 1]);
  };
  hw(p.in_size, 1, &g.H, &g.W);
  hw(p.out_size, 1, &g.OH, &g.OW);
  hw(p.kernel, 1, &g.KH, &g.KW);
  hw(p.stride, 1, &g.sh, &g.sw);
  hw(p.dilation, 1, &g.dh, &g.dw);
  hw(p.pad_begin, 0, &g.ph, &g.pw);
  g.C = g.CS = int(p.in_channels);
  return g;
}

template <typename E>
struct IgemmElem;
template <>
struct IgemmElem<__half> {
  using Acc = float;
  static constexpr int kChunk = 8;  // elements per 16-byte chunk
  static constexpr int kMmaK = 16;  // K of one mma
  static __device__ __forceinline__ __half zero() { return __half(0.f); }
};
template <>
struct IgemmElem<int8_t> {
  using Acc = int32_t;
  static constexpr int kChunk = 16;
  static constexpr int kMmaK = 32;
  static __device__ __forceinline__ int8_t zero() { return 0; }
};

// BK: K elements per pipeline stage. Shared rows are BK plus one 16-byte chunk (80 or 144
// bytes): the 8 rows of each ldmatrix land in distinct 16-byte bank groups. VEC: cp.async
// loads of whole 16-byte chunks (Cin a multiple of the chunk), or with HALF of two 8-byte
// halves each (Cin a multiple of half a chunk: INT8 convs of 24 or 40 channels); otherwise
// element-wise loads.
template <typename E, int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, bool VEC,
          bool HALF = false>
struct Igemm {
  using Elem = E;
  using Acc = typename IgemmElem<E>::Acc;
  static constexpr bool kVec = VEC, kHalf = VEC && HALF;
  static constexpr int kChunk = IgemmElem<E>::kChunk, kMmaK = IgemmElem<E>::kMmaK;
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kPitch = BK + kChunk;
  static constexpr int kStages = STAGES, kWarpsN = WARPS_N;
  static constexpr int kThreads = WARPS_M * WARPS_N * 32;
  static constexpr int kWM = BM / WARPS_M, kWN = BN / WARPS_N;
  static constexpr int kMI = kWM / 16, kNI = kWN / 8;
  static constexpr int kChunksPerRow = BK / kChunk;
  static constexpr int kAChunks = BM * kChunksPerRow / kThreads;  // 16-byte chunks per thread
  static constexpr int kBChunks = BN * kChunksPerRow / kThreads;
  static constexpr int kStageElems = (BM + BN) * kPitch;
  // The epilogue stages the tile as [BM][BN + 8] floats in the same shared memory (a pitch of 8
  // banks past a multiple of 32: the float2 stores of a half-warp's 4 rows hit distinct banks).
  static constexpr int kEpiPitch = BN + 8;
  static constexpr int kPipelineBytes = STAGES * kStageElems * int(sizeof(E));
  static constexpr int kEpiBytes = BM * kEpiPitch * 4;
  static constexpr int kSharedBytes = kPipelineBytes > kEpiBytes ? kPipelineBytes : kEpiBytes;
  // Up to sm_87's 163 KiB a block; the selection checks the target's (99 KiB on sm_86/89).
  static_assert(kSharedBytes <= 160 * 1024, "fits a block on Orin");
  static_assert(BM * BN / 4 % kThreads == 0, "the epilogue's groups of four columns");
  static_assert(kAChunks >= 1 && kBChunks >= 1 && kNI % 2 == 0, "tile shape");
  static constexpr bool kWgmma = false;
  static constexpr int kAhead = STAGES - 1;  // stages loaded ahead of the one computed
  // Where 16-byte chunk `chunk` of a stage's tile row `row` starts (elements; rows of A, then
  // of B from row kBM on).
  static __device__ __forceinline__ int at(int row, int chunk) {
    return row * kPitch + chunk * kChunk;
  }
};

// The Hopper tiles (sm_90a, kernels/cuda/wgmma.cuh): FP16 or INT8, 128 bytes of K a stage (64
// halves, 128 int8), BM / 64 warpgroups each computing 64 rows by 128 with wgmma from shared
// memory. INFLIGHT: the wgmma steps of one stage (1) stay in flight while the next stage's are
// issued, so loads run kStages - 2 stages ahead instead of kStages - 1 (0: each stage's steps
// finish before the next barrier). Same loads, split-K and epilogue as Igemm (the fields they
// read mean the same), but the stage's rows are 128 bytes in the 128-byte swizzle (at(): chunk c
// of row r at chunk c ^ (r % 8)), each stage 1024-byte aligned (kSharedBytes has 1 KiB of slack
// for aligning the dynamic shared memory's start). Each warp holds 16 full rows of
// accumulators: kMI 1, kNI BN / 8, warp tile 16 x BN.
template <typename E, int BM, int STAGES, int INFLIGHT>
struct IgemmWg {
  static constexpr int BN = 128;
  using Elem = E;
  using Acc = typename IgemmElem<E>::Acc;
  static constexpr bool kVec = true, kHalf = false, kWgmma = true;
  static constexpr int kInflight = INFLIGHT, kAhead = STAGES - 1 - INFLIGHT;
  static constexpr int kChunk = IgemmElem<E>::kChunk, kMmaK = IgemmElem<E>::kMmaK;
  static constexpr int kBM = BM, kBN = BN, kBK = 128 / int(sizeof(E)), kPitch = kBK;
  static constexpr int kStages = STAGES, kWarpsN = 1;
  static constexpr int kThreads = BM / 16 * 32;
  static constexpr int kWM = 16, kWN = BN, kMI = 1, kNI = BN / 8;
  static constexpr int kChunksPerRow = 8;
  static constexpr int kAChunks = BM * 8 / kThreads, kBChunks = BN * 8 / kThreads;
  static constexpr int kStageElems = (BM + BN) * kBK;
  static constexpr int kEpiPitch = BN + 8;
  static constexpr int kPipelineBytes = STAGES * kStageElems * int(sizeof(E)) + 1024;
  static constexpr int kEpiBytes = BM * kEpiPitch * 4;
  static constexpr int kSharedBytes = kPipelineBytes > kEpiBytes ? kPipelineBytes : kEpiBytes;
  static_assert(kSharedBytes <= 227 * 1024, "fits a block on sm_90");
  static_assert(BM % 64 == 0 && (INFLIGHT == 0 || INFLIGHT == 1) && kAhead >= 1, "tile shape");
  static __device__ __forceinline__ int at(int row, int chunk) {
    return row * kPitch + (chunk ^ (row & 7)) * kChunk;
  }
};

// The output pixels whose A rows a thread loads, fixed for the whole K loop: batch entry n, the
// receptive field's top-left input position (ih, iw), and ok = the row is inside M.
template <int CHUNKS>
struct IgemmRows {
  int n[CHUNKS], ih[CHUNKS], iw[CHUNKS];
  bool ok[CHUNKS];
};
// This thread's A rows of the output tile from row m0.
template <typename T>
__device__ __forceinline__ IgemmRows<T::kAChunks> igemm_rows(const Geo2& g, int m0, int M,
                                                             int tid) {
  constexpr int kRowStep = T::kThreads / T::kChunksPerRow;
  IgemmRows<T::kAChunks> rows;
#pragma unroll
  for (int i = 0; i < T::kAChunks; ++i) {
    const int m = m0 + tid / T::kChunksPerRow + i * kRowStep;
    rows.ok[i] = m < M;
    const int mm = rows.ok[i] ? m : 0;
    const int ow = mm % g.OW, t = mm / g.OW;
    rows.ih[i] = (t % g.OH) * g.sh - g.ph;
    rows.iw[i] = ow * g.sw - g.pw;
    rows.n[i] = t / g.OH;
  }
  return rows;
}

// Where a thread's K chunk is in the (kh, kw, c) order of K: k = (kh * KW + kw) * C + c. The K
// loop loads its tiles in order, so the position steps forward by BK a tile (a few adds and
// compares) instead of three integer divisions a tile (about 60 instructions, as many as the
// tile's mma steps on a short tile).
struct KPos {
  int k, c, kh, kw;
  __device__ __forceinline__ void start(int k0, const Geo2& g) {
    k = k0;
    c = k0 % g.C;
    const int rs = k0 / g.C;
    kh = rs / g.KW;
    kw = rs - kh * g.KW;
  }
  __device__ __forceinline__ void advance(int step, const Geo2& g) {
    k += step;
    c += step;
    while (c >= g.C) {
      c -= g.C;
      if (++kw == g.KW) kw = 0, ++kh;
    }
  }
};

// One pipeline stage's loads: K tile kt of A (the im2col rows of x) into sa, of B (the rows of
// w, already [Cout, K]) after it; LOAD_A and LOAD_B say which of the two. VEC: 16-byte cp.async
// chunks (Cin a multiple of the chunk: a chunk never straddles a (kh, kw) boundary), at K
// position kp (the tile's, this thread's chunk j); otherwise element-wise loads through
// registers. Each thread loads K chunk j of its rows.
template <typename T, bool LOAD_A = true, bool LOAD_B = true, typename E = typename T::Elem>
__device__ __forceinline__ void igemm_load_tile(E* sa, int kt, const KPos& kp, const Geo2& g,
                                                const E* x, const E* w, int N, int K, int n0,
                                                int tid, int j,
                                                const IgemmRows<T::kAChunks>& a) {
  constexpr int kC = T::kChunk, kRowStep = T::kThreads / T::kChunksPerRow;
  E* sb = sa + T::kBM * T::kPitch;
  const int kbase = kt * T::kBK + j * kC;
  if (T::kVec) {
    const bool k_ok = kp.k < K;
    const int c = kp.c, kh = kp.kh, kw = kp.kw;
    // HALF: the chunk's second half, kH elements on in K (Cin % kH == 0, so neither half
    // straddles a (kh, kw) boundary: it wraps at most once).
    constexpr int kH = kC / 2;
    int c2 = c + kH, kh2 = kh, kw2 = kw;
    if (T::kHalf && c2 >= g.C) {
      c2 -= g.C;
      if (++kw2 == g.KW) kw2 = 0, ++kh2;
    }
    const bool k2_ok = kp.k + kH < K;
#pragma unroll
    for (int i = 0; i < (LOAD_A ? T::kAChunks : 0); ++i) {
      const int row = tid / T::kChunksPerRow + i * kRowStep;
      const int ih = a.ih[i] + kh * g.dh, iw = a.iw[i] + kw * g.dw;
      const bool ok = k_ok && a.ok[i] && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
      const E* src = ok ? x + ((int64_t(a.n[i]) * g.H + ih) * g.W + iw) * g.CS + c : x;
      if (!T::kHalf) {
        cp_async16(smem_u32(sa + T::at(row, j)), src, ok);
        continue;
      }
      cp_async8(smem_u32(sa + T::at(row, j)), src, ok);
      const int ih2 = a.ih[i] + kh2 * g.dh, iw2 = a.iw[i] + kw2 * g.dw;
      const bool ok2 = k2_ok && a.ok[i] && ih2 >= 0 && ih2 < g.H && iw2 >= 0 && iw2 < g.W;
      const E* src2 = ok2 ? x + ((int64_t(a.n[i]) * g.H + ih2) * g.W + iw2) * g.CS + c2 : x;
      cp_async8(smem_u32(sa + T::at(row, j) + kH), src2, ok2);
    }
#pragma unroll
    for (int i = 0; i < (LOAD_B ? T::kBChunks : 0); ++i) {
      const int row = tid / T::kChunksPerRow + i * kRowStep;
      const bool ok = k_ok && n0 + row < N;
      const E* src = ok ? w + int64_t(n0 + row) * K + kp.k : w;
      if (!T::kHalf) {
        cp_async16(smem_u32(sb + T::at(row, j)), src, ok);
        continue;
      }
      cp_async8(smem_u32(sb + T::at(row, j)), src, ok);
      const bool ok2 = k2_ok && n0 + row < N;
      cp_async8(smem_u32(sb + T::at(row, j) + kH), ok2 ? src + kH : w, ok2);
    }
  } else {
    // (kh, kw, c) of the chunk's elements: divisions for the first only, then stepped (c runs
    // fastest in K, then kw, then kh); past K the coordinates do not matter (kok is false).
    int cs[kC], khs[kC], kws[kC];
    bool kok[kC];
    {
      const int k0 = kbase < K ? kbase : 0;
      int c = k0 % g.C;
      const int rs = k0 / g.C;
      int kh = rs / g.KW, kw = rs - kh * g.KW;
#pragma unroll
      for (int e = 0; e < kC; ++e) {
        kok[e] = kbase + e < K;
        cs[e] = c;
        khs[e] = kh;
        kws[e] = kw;
        if (++c == g.C) {
          c = 0;
          if (++kw == g.KW) kw = 0, ++kh;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < (LOAD_A ? T::kAChunks : 0); ++i) {
      const int row = tid / T::kChunksPerRow + i * kRowStep;
      __align__(16) E v[kC];
#pragma unroll
      for (int e = 0; e < kC; ++e) {
        const int ih = a.ih[i] + khs[e] * g.dh, iw = a.iw[i] + kws[e] * g.dw;
        const bool ok = kok[e] && a.ok[i] && ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
        v[e] = ok ? x[((int64_t(a.n[i]) * g.H + ih) * g.W + iw) * g.CS + cs[e]]
                  : IgemmElem<E>::zero();
      }
      *reinterpret_cast<uint4*>(sa + T::at(row, j)) = *reinterpret_cast<uint4*>(v);
    }
#pragma unroll
    for (int i = 0; i < (LOAD_B ? T::kBChunks : 0); ++i) {
      const int row = tid / T::kChunksPerRow + i * kRowStep;
      __align__(16) E v[kC];
#pragma unroll
      for (int e = 0; e < kC; ++e)
        v[e] = (kok[e] && n0 + row < N) ? w[int64_t(n0 + row) * K + kbase + e]
                                        : IgemmElem<E>::zero();
      *reinterpret_cast<uint4*>(sb + T::at(row, j)) = *reinterpret_cast<uint4*>(v);
    }
  }
}

// The rows a thread loads when A is a plain [M, K] matrix (a 1x1 conv with stride 1 and no
// padding, which is every Gemm and MatMul the converter lowers to Conv): each A and B chunk's
// row start, fixed for the whole K loop, so a tile's loads are one add and one compare each
// instead of igemm_load_tile()'s window coordinates, bounds tests and 64-bit products (the
// general path's address arithmetic was most of the 128x128 tile's instructions at ViT's GEMMs).
// Rows past M or N point at row 0 and load nothing.
template <typename T, typename E = typename T::Elem>
struct PwRows {
  const E* a[T::kAChunks];
  const E* b[T::kBChunks];
  bool a_ok[T::kAChunks], b_ok[T::kBChunks];
};

// This thread's A and B rows of the tile at (m0, n0) (K = Cin elements a row).
template <typename T, typename E = typename T::Elem>
__device__ __forceinline__ PwRows<T> pw_rows(const E* x, const E* w, int m0, int n0, int M, int N,
                                             int K, int tid) {
  constexpr int kRowStep = T::kThreads / T::kChunksPerRow;
  PwRows<T> r;
#pragma unroll
  for (int i = 0; i < T::kAChunks; ++i) {
    const int m = m0 + tid / T::kChunksPerRow + i * kRowStep;
    r.a_ok[i] = m < M;
    r.a[i] = x + int64_t(r.a_ok[i] ? m : 0) * K;
  }
#pragma unroll
  for (int i = 0; i < T::kBChunks; ++i) {
    const int n = n0 + tid / T::kChunksPerRow + i * kRowStep;
    r.b_ok[i] = n < N;
    r.b[i] = w + int64_t(r.b_ok[i] ? n : 0) * K;
  }
  return r;
}

// One pipeline stage of the pointwise case: this thread's K chunk starts at element k of its
// rows (K = Cin). HALF: two 8-byte halves (K % 16 == 8 leaves rows only 8-byte aligned).
template <typename T, bool LOAD_A = true, bool LOAD_B = true, typename E = typename T::Elem>
__device__ __forceinline__ void igemm_load_tile_pw(E* sa, int k, int K, const PwRows<T>& r,
                                                   int tid, int j) {
  constexpr int kC = T::kChunk, kH = kC / 2, kRowStep = T::kThreads / T::kChunksPerRow;
  E* sb = sa + T::kBM * T::kPitch;
  const bool k_ok = k < K, k2_ok = k + kH < K;
  auto put = [&](E* s, const E* row, bool row_ok) {
    if (!T::kHalf) {
      cp_async16(smem_u32(s), row_ok && k_ok ? row + k : row, row_ok && k_ok);
      return;
    }
    cp_async8(smem_u32(s), row_ok && k_ok ? row + k : row, row_ok && k_ok);
    cp_async8(smem_u32(s + kH), row_ok && k2_ok ? row + k + kH : row, row_ok && k2_ok);
  };
#pragma unroll
  for (int i = 0; i < (LOAD_A ? T::kAChunks : 0); ++i)
    put(sa + T::at(tid / T::kChunksPerRow + i * kRowStep, j), r.a[i], r.a_ok[i]);
#pragma unroll
  for (int i = 0; i < (LOAD_B ? T::kBChunks : 0); ++i)
    put(sb + T::at(tid / T::kChunksPerRow + i * kRowStep, j), r.b[i], r.b_ok[i]);
}

// The grouped form (conv_grouped_igemm_fits): an N tile of output channels runs K over the input
// channels of the groups it covers, from its first group's (conv_grouped_tile), as one
// block-diagonal B. Each of a thread's B rows (output channel o) holds its own group's weights
// ([Cout, KH, KW, Cin / groups]) where the tile's K position (kh, kw, c) falls in that group's
// channels, tile-local [lo, lo + cin_g), and zeros elsewhere. Rows past N get a lo that no
// channel reaches. A loads as in the general form (igemm_load_tile, x offset to the tile's
// first channel, CS its pixel stride).
template <typename T, typename E = typename T::Elem>
struct GroupRows {
  const E* b[T::kBChunks];
  int lo[T::kBChunks];
  int cin_g;
};

// The B rows of this thread (tile N from n0, x's channels from `first`).
template <typename T, typename E = typename T::Elem>
__device__ __forceinline__ GroupRows<T> group_rows(const E* w, const Geo2& g, int groups,
                                                   int first, int n0, int N, int tid) {
  constexpr int kRowStep = T::kThreads / T::kChunksPerRow;
  GroupRows<T> r;
  r.cin_g = g.CS / groups;
  const int cout_g = N / groups, row = g.KH * g.KW * r.cin_g;
#pragma unroll
  for (int i = 0; i < T::kBChunks; ++i) {
    const int n = n0 + tid / T::kChunksPerRow + i * kRowStep;
    r.b[i] = w + (n < N ? int64_t(n) * row : 0);
    r.lo[i] = n < N ? n / cout_g * r.cin_g - first : -(1 << 30);
  }
  return r;
}

// One stage's B tile of the grouped form, in 8-byte halves (a group's channels are a multiple of
// a half: a half is all in its row's group or all out). The second half of an INT8 chunk may
// start at the next window tap (the tile's channels are a multiple of 8, of 16 bytes for halves
// only), as igemm_load_tile's HALF form.
template <typename T, typename E = typename T::Elem>
__device__ __forceinline__ void igemm_load_b_grouped(E* sa, const KPos& kp, const Geo2& g, int K,
                                                     const GroupRows<T>& r, int tid, int j) {
  constexpr int kC = T::kChunk, kH = kC / 2, kRowStep = T::kThreads / T::kChunksPerRow;
  E* sb = sa + T::kBM * T::kPitch;
  const int tap = kp.kh * g.KW + kp.kw;
  const bool wraps = kp.c + kH >= g.C;  // the second half's channel and tap
  const int c_of[2] = {kp.c, wraps ? kp.c + kH - g.C : kp.c + kH};
  const int tap_of[2] = {tap * r.cin_g, (wraps ? tap + 1 : tap) * r.cin_g};
  const bool k_of[2] = {kp.k < K, kp.k + kH < K};
#pragma unroll
  for (int i = 0; i < T::kBChunks; ++i) {
    E* s = sb + T::at(tid / T::kChunksPerRow + i * kRowStep, j);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = c_of[h] - r.lo[i];
      const bool ok = k_of[h] && unsigned(c) < unsigned(r.cin_g);
      cp_async8(smem_u32(s + h * kH), ok ? r.b[i] + tap_of[h] + c : r.b[i], ok);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda
