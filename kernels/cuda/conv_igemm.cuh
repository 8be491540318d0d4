// The implicit-GEMM main loop of the Conv family's tensor-core kernels (kernels/cuda/conv.cu),
// one template for its two element types:
//   __half  mma.sync m16n8k16, FP32 accumulators, 8 elements per 16-byte chunk
//   int8_t  mma.sync m16n8k32 (s8 x s8), int32 accumulators, 16 elements per 16-byte chunk
// Both read the same bytes the same way: a 16-byte shared-memory row of 8 halves or 16 int8 is
// one ldmatrix row, and the m16n8k32 s8 fragments sit at the same byte positions as the
// m16n8k16 f16 ones, so tiles, pitches and ldmatrix addresses are written in 16-byte chunks.
// M = N*OH*OW rows (output pixels), N = Cout, K = KH*KW*Cin: NHWC weights are already the
// [Cout, K] row-major B matrix. The epilogue is the caller's (Epi, see igemm_epilogue()).
//
// Serial split-K: gridDim.z slices of K; each CTA stores its partial tile in the workspace,
// counts its arrival (counters after the partials, zeroed by the runtime: zero_workspace), and
// the last CTA of a tile sums the slices in slice order (deterministic) and runs the epilogue. It
// resets the counter, so back-to-back launches also work without a memset.
#pragma once

#include <cuda_fp16.h>
#include <cstdint>
#include <type_traits>

#include "kernels/conv.h"
#include "kernels/cuda/conv_igemm_epilogue.cuh"
#include "kernels/cuda/device_math.cuh"
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
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// One tensor-core step; the accumulator's type picks the instruction.
__device__ __forceinline__ void mma_step(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_step(int32_t (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The 2-D geometry the igemm and depthwise kernels use (rank 1 maps to H = 1).
struct Geo2 {
  int H, W, C, OH, OW, KH, KW, sh, sw, dh, dw, ph, pw;
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
  g.C = int(p.in_channels);
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
};

// The output pixels whose A rows a thread loads, fixed for the whole K loop: batch entry n, the
// receptive field's top-left input position (ih, iw), and ok = the row is inside M.
template <int CHUNKS>
struct IgemmRows {
  int n[CHUNKS], ih[CHUNKS], iw[CHUNKS];
  bool ok[CHUNKS];
};

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
      const E* src = ok ? x + ((int64_t(a.n[i]) * g.H + ih) * g.W + iw) * g.C + c : x;
      if (!T::kHalf) {
        cp_async16(smem_u32(sa + row * T::kPitch + j * kC), src, ok);
        continue;
      }
      cp_async8(smem_u32(sa + row * T::kPitch + j * kC), src, ok);
      const int ih2 = a.ih[i] + kh2 * g.dh, iw2 = a.iw[i] + kw2 * g.dw;
      const bool ok2 = k2_ok && a.ok[i] && ih2 >= 0 && ih2 < g.H && iw2 >= 0 && iw2 < g.W;
      const E* src2 = ok2 ? x + ((int64_t(a.n[i]) * g.H + ih2) * g.W + iw2) * g.C + c2 : x;
      cp_async8(smem_u32(sa + row * T::kPitch + j * kC + kH), src2, ok2);
    }
#pragma unroll
    for (int i = 0; i < (LOAD_B ? T::kBChunks : 0); ++i) {
      const int row = tid / T::kChunksPerRow + i * kRowStep;
      const bool ok = k_ok && n0 + row < N;
      const E* src = ok ? w + int64_t(n0 + row) * K + kp.k : w;
      if (!T::kHalf) {
        cp_async16(smem_u32(sb + row * T::kPitch + j * kC), src, ok);
        continue;
      }
      cp_async8(smem_u32(sb + row * T::kPitch + j * kC), src, ok);
      const bool ok2 = k2_ok && n0 + row < N;
      cp_async8(smem_u32(sb + row * T::kPitch + j * kC + kH), ok2 ? src + kH : w, ok2);
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
        v[e] = ok ? x[((int64_t(a.n[i]) * g.H + ih) * g.W + iw) * g.C + cs[e]]
                  : IgemmElem<E>::zero();
      }
      *reinterpret_cast<uint4*>(sa + row * T::kPitch + j * kC) = *reinterpret_cast<uint4*>(v);
    }
#pragma unroll
    for (int i = 0; i < (LOAD_B ? T::kBChunks : 0); ++i) {
      const int row = tid / T::kChunksPerRow + i * kRowStep;
      __align__(16) E v[kC];
#pragma unroll
      for (int e = 0; e < kC; ++e)
        v[e] = (kok[e] && n0 + row < N) ? w[int64_t(n0 + row) * K + kbase + e]
                                        : IgemmElem<E>::zero();
      *reinterpret_cast<uint4*>(sb + row * T::kPitch + j * kC) = *reinterpret_cast<uint4*>(v);
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
    put(sa + (tid / T::kChunksPerRow + i * kRowStep) * T::kPitch + j * kC, r.a[i], r.a_ok[i]);
#pragma unroll
  for (int i = 0; i < (LOAD_B ? T::kBChunks : 0); ++i)
    put(sb + (tid / T::kChunksPerRow + i * kRowStep) * T::kPitch + j * kC, r.b[i], r.b_ok[i]);
}

// Serial split-K, after the K loop: the CTA stores its partial tile, counts its arrival, and the
// last CTA of the tile to arrive sums every slice into acc (the epilogue runs there only).
// Returns whether this CTA is that last one. Int32 partials sum exactly in any order; FP32
// ones are summed in slice order.
template <typename T, typename A = typename T::Acc>
__device__ __forceinline__ bool igemm_split_k(A (&acc)[T::kMI][T::kNI][4],
                                              const StepPointers& ptrs, int splits,
                                              uint64_t tiles, int tid) {
  A* ws = static_cast<A*>(ptrs.workspace);
  const uint64_t tile = uint64_t(blockIdx.y) * gridDim.x + blockIdx.x;
  uint32_t* counters = reinterpret_cast<uint32_t*>(ws + tiles * splits * T::kBM * T::kBN);
  A* mine = ws + (blockIdx.z * tiles + tile) * (T::kBM * T::kBN);
#pragma unroll
  for (int a = 0; a < T::kMI; ++a)
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) __stcg(mine + ((a * T::kNI + b) * 4 + c) * T::kThreads + tid, acc[a][b][c]);
  __threadfence();
  __syncthreads();
  __shared__ uint32_t last;
  if (tid == 0) last = atomicAdd(counters + tile, 1u) == uint32_t(splits - 1);
  __syncthreads();
  if (!last) return false;
  __threadfence();
  // Slice order for every element (so the bits do not depend on which CTA came last); the
  // loads of one slice are independent, so they are all in flight at once.
#pragma unroll
  for (int a = 0; a < T::kMI; ++a)
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[a][b][c] = A(0);
  for (int z = 0; z < splits; ++z) {
    const A* slice = ws + (uint64_t(z) * tiles + tile) * (T::kBM * T::kBN) + tid;
#pragma unroll
    for (int a = 0; a < T::kMI; ++a)
#pragma unroll
      for (int b = 0; b < T::kNI; ++b)
#pragma unroll
        for (int c = 0; c < 4; ++c)
          acc[a][b][c] += __ldcg(slice + ((a * T::kNI + b) * 4 + c) * T::kThreads);
  }
  if (tid == 0) counters[tile] = 0;
  return true;
}

// The K loop and epilogue of igemm(), PW: the pointwise form (see PwRows).
template <typename T, typename Epi, bool PW>
__device__ __forceinline__ void igemm_tiles(const StepPointers& ptrs, const ConvParams& p,
                                            const Geo2& g, const int M) {
  using E = typename T::Elem;
  using A = typename T::Acc;
  constexpr int kBM = T::kBM, kBN = T::kBN, kBK = T::kBK, kPitch = T::kPitch;
  constexpr int kC = T::kChunk, kStages = T::kStages;
  extern __shared__ __align__(16) unsigned char igemm_smem[];
  E* smem = reinterpret_cast<E*>(igemm_smem);
  const E* x = static_cast<const E*>(ptrs.in[0]);
  const E* w = static_cast<const E*>(ptrs.in[1]);
  const int N = int(p.out_channels);
  const int K = g.KH * g.KW * g.C;
  const int KT = (K + kBK - 1) / kBK;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;

  // Split-K range of this CTA.
  const int splits = gridDim.z;
  const int per = (KT + splits - 1) / splits;
  const int kt_begin = min(KT, int(blockIdx.z) * per);
  const int kt_end = min(KT, kt_begin + per);
  const uint64_t tiles = uint64_t(gridDim.x) * gridDim.y;
  if (splits > 1 && (ptrs.workspace == nullptr ||
                     ptrs.workspace_bytes < tiles * (uint64_t(splits) * kBM * kBN * 4 + 4))) {
    pdl_wait();
    return;  // a plan with too little workspace computes nothing rather than overrun it
  }

  // Rows this thread loads (K chunk j fixed per thread): PW, plain row pointers of x and w;
  // otherwise the output pixels of its A rows, and the K position kp, which steps on a tile.
  const int j = tid % T::kChunksPerRow;
  constexpr int kRowStep = T::kThreads / T::kChunksPerRow;
  PwRows<T> pw;
  IgemmRows<T::kAChunks> rows;
  KPos kp{};  // PW: unused
  int kpos = kt_begin * kBK + j * kC;
  if constexpr (PW) {
#pragma unroll
    for (int i = 0; i < T::kAChunks; ++i) {
      const int m = m0 + tid / T::kChunksPerRow + i * kRowStep;
      pw.a_ok[i] = m < M;
      pw.a[i] = x + int64_t(pw.a_ok[i] ? m : 0) * K;
    }
#pragma unroll
    for (int i = 0; i < T::kBChunks; ++i) {
      const int n = n0 + tid / T::kChunksPerRow + i * kRowStep;
      pw.b_ok[i] = n < N;
      pw.b[i] = w + int64_t(pw.b_ok[i] ? n : 0) * K;
    }
  } else {
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
    if (T::kVec) kp.start(kpos, g);
  }
  // One stage's loads (A, B or both) of tile kt, at the position `pos` / `at` of that tile,
  // which then steps on by a tile.
  auto load = [&](auto a_b, int stage, int kt, int& pos, KPos& at) {
    constexpr bool kA = decltype(a_b)::value != 2, kB = decltype(a_b)::value != 1;
    E* s = smem + stage * T::kStageElems;
    if constexpr (PW) {
      igemm_load_tile_pw<T, kA, kB>(s, pos, K, pw, tid, j);
    } else {
      igemm_load_tile<T, kA, kB>(s, kt, at, g, x, w, N, K, n0, tid, j, rows);
      if (T::kVec) at.advance(kBK, g);
    }
    pos += kBK;
  };
  using Both = std::integral_constant<int, 0>;
  using OnlyA = std::integral_constant<int, 1>;
  using OnlyB = std::integral_constant<int, 2>;
  // The prologue's stages: a constant w's tiles first, then the wait for the previous kernel
  // (an early launch, see pdl_wait()), then x's. Each stage's A chunks commit as its group, so
  // the first group holds every prologue B tile and the groups still complete in stage order.
  if (p.w_constant) {
    KPos kb = kp;
    int bpos = kpos;
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s)
      if (kt_begin + s < kt_end) load(OnlyB{}, s, kt_begin + s, bpos, kb);
  }
  pdl_wait();
  pdl_trigger();

  A acc[T::kMI][T::kNI][4];
#pragma unroll
  for (int a = 0; a < T::kMI; ++a)
#pragma unroll
    for (int b = 0; b < T::kNI; ++b)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[a][b][c] = A(0);

  const int wm = (warp / T::kWarpsN) * T::kWM, wn = (warp % T::kWarpsN) * T::kWN;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (kt_begin + s < kt_end) {
      if (p.w_constant) load(OnlyA{}, s, kt_begin + s, kpos, kp);
      else load(Both{}, s, kt_begin + s, kpos, kp);
    }
    cp_async_commit();
  }
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < kt_end) load(Both{}, (next - kt_begin) % kStages, next, kpos, kp);
    cp_async_commit();
    const E* sa = smem + ((kt - kt_begin) % kStages) * T::kStageElems;
    const E* sb = sa + kBM * kPitch;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += T::kMmaK) {
      uint32_t af[T::kMI][4], bf[T::kNI / 2][4];
#pragma unroll
      for (int mi = 0; mi < T::kMI; ++mi)
        ldmatrix_x4(smem_u32(sa + (wm + mi * 16 + (lane & 15)) * kPitch + kk + (lane >> 4) * kC),
                    af[mi]);
#pragma unroll
      for (int np = 0; np < T::kNI / 2; ++np)
        ldmatrix_x4(smem_u32(sb + (wn + np * 16 + (lane & 7) + (lane >> 4) * 8) * kPitch + kk +
                             ((lane >> 3) & 1) * kC),
                    bf[np]);
#pragma unroll
      for (int mi = 0; mi < T::kMI; ++mi)
#pragma unroll
        for (int ni = 0; ni < T::kNI; ++ni)
          mma_step(acc[mi][ni], af[mi], bf[ni / 2][(ni & 1) * 2], bf[ni / 2][(ni & 1) * 2 + 1]);
    }
  }
  cp_async_wait<0>();

  if (splits > 1 && !igemm_split_k<T>(acc, ptrs, splits, tiles, tid)) return;
  igemm_epilogue<T, Epi>(acc, ptrs, p, M, N, m0, n0, wm, wn, tid);
}

// The implicit GEMM of one output tile. Epi::fits(p) says whether the step is one this epilogue
// writes; after the K loop (and split-K's reduction), igemm_epilogue() writes the tile through
// Epi (context, column, staged, residual, store4: see EpilogueF16 in conv.cu). Returns without
// writing when the step does not fit the kernel (a plan is untrusted).
template <typename T, typename Epi>
__device__ __forceinline__ void igemm(const StepPointers& ptrs, const ConvParams& p) {
  using E = typename T::Elem;
  constexpr int kC = T::kChunk;
  if (blockDim.x != T::kThreads || !p.channels_last || p.spatial_rank > 2 || p.groups != 1 ||
      p.int8.enabled != (sizeof(E) == 1) || !Epi::fits(p) ||
      (T::kVec && p.in_channels % (T::kHalf ? kC / 2 : kC) != 0) ||
      p.batch * p.out_size[0] * p.out_size[1] >= (int64_t{1} << 31) ||
      p.out_channels >= (int64_t{1} << 31) ||
      p.kernel[0] * p.kernel[1] * p.in_channels >= (int64_t{1} << 31)) {
    pdl_wait();
    return;
  }
  const Geo2 g = geo2(p);
  const int M = int(p.batch) * g.OH * g.OW;
  // A 1x1 conv with stride 1 and no padding reads x as the [M, C] matrix it is (igemm_tiles'
  // PW form, with plain row pointers).
  const bool pointwise = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 &&
                         g.pw == 0 && g.OH == g.H && g.OW == g.W;
  if (T::kVec && pointwise) igemm_tiles<T, Epi, true>(ptrs, p, g, M);
  else igemm_tiles<T, Epi, false>(ptrs, p, g, M);
}

}  // namespace
}  // namespace jetplan::kernels::cuda
