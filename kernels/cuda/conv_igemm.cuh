// The implicit-GEMM main loop of the Conv family's tensor-core kernels (kernels/cuda/conv.cu),
// one template for its two element types:
//   __half  mma.sync m16n8k16, FP32 accumulators, 8 elements per 16-byte chunk
//   int8_t  mma.sync m16n8k32 (s8 x s8), int32 accumulators, 16 elements per 16-byte chunk
// Both read the same bytes the same way: a 16-byte shared-memory row of 8 halves or 16 int8 is
// one ldmatrix row, and the m16n8k32 s8 fragments sit at the same byte positions as the
// m16n8k16 f16 ones, so tiles, pitches and ldmatrix addresses are written in 16-byte chunks.
// M = N*OH*OW rows (output pixels), N = Cout, K = KH*KW*Cin: NHWC weights are already the
// [Cout, K] row-major B matrix. The epilogue is the caller's (Epi, see igemm_epilogue()).
// Grouped convs (the GROUPED form) run each N tile over the channels of the groups it covers,
// with the other groups' weights loaded as zeros (conv_igemm_load.cuh, GroupRows): tensor-core
// tiles at any group width, at the cost of the zeros' multiplies.
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
#include "kernels/cuda/conv_igemm_load.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/wgmma.cuh"

namespace jetplan::kernels::cuda {
namespace {

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

// One stage's tensor-core steps: the tile's A rows at sa and B rows at sb (shared memory) into
// acc; mma.sync from ldmatrix fragments (warp tile at wm, wn), or wgmma (IgemmWg).
template <typename T>
__device__ __forceinline__ void igemm_stage(typename T::Acc (&acc)[T::kMI][T::kNI][4],
                                            const typename T::Elem* sa,
                                            const typename T::Elem* sb, int warp, int lane, int wm,
                                            int wn) {
  constexpr int kBK = T::kBK, kPitch = T::kPitch, kC = T::kChunk;
  if constexpr (T::kWgmma) {
    // Each warpgroup its 64 rows of A against all of B, four k16 steps, of which the last
    // kInflight stages' may still run when the next barrier comes (see igemm_tiles).
    const uint32_t a0 = smem_u32(sa) + (warp / 4) * 64 * 128, b0 = smem_u32(sb);
    wgmma_fence_acc(acc[0]);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      wgmma_step(acc[0], wg_desc(a0 + kk * 32), wg_desc(b0 + kk * 32));
    wgmma_commit();
    wgmma_wait<T::kInflight>();
    wgmma_fence_acc(acc[0]);
  } else {
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
}

// igemm_tiles' forms: the general one, the pointwise one (see PwRows), the grouped one (see
// GroupRows).
enum IgemmForm { kIgemmGeneral, kIgemmPointwise, kIgemmGrouped };

// The K loop and epilogue of igemm() in one of its forms.
template <typename T, typename Epi, int FORM>
__device__ __forceinline__ void igemm_tiles(const StepPointers& ptrs, const ConvParams& p,
                                            Geo2 g, const int M) {
  constexpr bool PW = FORM == kIgemmPointwise, GROUPED = FORM == kIgemmGrouped;
  using E = typename T::Elem;
  using A = typename T::Acc;
  constexpr int kBM = T::kBM, kBN = T::kBN, kBK = T::kBK, kPitch = T::kPitch;
  constexpr int kC = T::kChunk, kStages = T::kStages, kAhead = T::kAhead;
  extern __shared__ __align__(16) unsigned char igemm_smem[];
  // The Hopper tiles' stages start 1024-byte aligned (the swizzle's unit; IgemmWg).
  E* smem = reinterpret_cast<E*>(
      igemm_smem + (T::kWgmma ? (1024 - (smem_u32(igemm_smem) & 1023)) & 1023 : 0));
  const E* x = static_cast<const E*>(ptrs.in[0]);
  const E* w = static_cast<const E*>(ptrs.in[1]);
  const int N = int(p.out_channels);
  const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
  // Grouped: K runs over the tile's own channels (conv_grouped_tile), x from the first of them.
  int first = 0;
  if constexpr (GROUPED) {
    int64_t c0 = 0;
    g.C = int(conv_grouped_tile(p, n0, kBN, &c0));
    first = int(c0);
    x += first;
  }
  const int K = g.KH * g.KW * g.C;
  const int KT = (K + kBK - 1) / kBK;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

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
  GroupRows<T> gr;
  IgemmRows<T::kAChunks> rows;
  KPos kp{};  // PW: unused
  int kpos = kt_begin * kBK + j * kC;
  if constexpr (PW) {
    pw = pw_rows<T>(x, w, m0, n0, M, N, K, tid);
  } else {
    rows = igemm_rows<T>(g, m0, M, tid);
    if (T::kVec) kp.start(kpos, g);
  }
  if constexpr (GROUPED) gr = group_rows<T>(w, g, int(p.groups), first, n0, N, tid);
  // One stage's loads (A, B or both) of tile kt, at the position `pos` / `at` of that tile,
  // which then steps on by a tile.
  auto load = [&](auto a_b, int stage, int kt, int& pos, KPos& at) {
    constexpr bool kA = decltype(a_b)::value != 2, kB = decltype(a_b)::value != 1;
    E* s = smem + stage * T::kStageElems;
    if constexpr (PW) {
      igemm_load_tile_pw<T, kA, kB>(s, pos, K, pw, tid, j);
    } else if constexpr (GROUPED) {
      if constexpr (kA) igemm_load_tile<T, true, false>(s, kt, at, g, x, w, N, K, n0, tid, j, rows);
      if constexpr (kB) igemm_load_b_grouped<T>(s, at, g, K, gr, tid, j);
      at.advance(kBK, g);
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
    for (int s = 0; s < kAhead; ++s)
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
  for (int s = 0; s < kAhead; ++s) {
    if (kt_begin + s < kt_end) {
      if (p.w_constant) load(OnlyA{}, s, kt_begin + s, kpos, kp);
      else load(Both{}, s, kt_begin + s, kpos, kp);
    }
    cp_async_commit();
  }
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    cp_async_wait<kAhead - 1>();
    if constexpr (T::kWgmma) fence_proxy_async();
    __syncthreads();
    // The stage loaded next was last read kStages - kAhead stages ago: by the mma steps before
    // this barrier, or (wgmma with a stage in flight) by those that the wgmma_wait<1> before it
    // finished in every warpgroup.
    const int next = kt + kAhead;
    if (next < kt_end) load(Both{}, (next - kt_begin) % kStages, next, kpos, kp);
    cp_async_commit();
    const E* sa = smem + ((kt - kt_begin) % kStages) * T::kStageElems;
    const E* sb = sa + kBM * kPitch;
    igemm_stage<T>(acc, sa, sb, warp, lane, wm, wn);
  }
  cp_async_wait<0>();
  if constexpr (T::kWgmma) {
    wgmma_wait<0>();
    wgmma_fence_acc(acc[0]);
  }

  if (splits > 1 && !igemm_split_k<T>(acc, ptrs, splits, tiles, tid)) return;
  igemm_epilogue<T, Epi>(acc, ptrs, p, M, N, m0, n0, wm, wn, tid);
}

// The implicit GEMM of one output tile. Epi::fits(p) says whether the step is one this epilogue
// writes; after the K loop (and split-K's reduction), igemm_epilogue() writes the tile through
// Epi (context, column, staged, residual, store4: see EpilogueF16 in conv.cu). Returns without
// writing when the step does not fit the kernel (a plan is untrusted). GROUPED: the grouped form
// (conv_grouped_igemm_fits); otherwise groups 1.
template <typename T, typename Epi, bool GROUPED = false>
__device__ __forceinline__ void igemm(const StepPointers& ptrs, const ConvParams& p) {
  using E = typename T::Elem;
  constexpr int kC = T::kChunk;
  // The grouped form's A loads are of 8 elements (conv_grouped_tile's unit).
  static_assert(!GROUPED || (T::kVec && (T::kHalf ? kC / 2 : kC) == 8), "grouped A loads");
  if (blockDim.x != T::kThreads || !p.channels_last || p.spatial_rank > 2 ||
      (GROUPED ? !conv_grouped_igemm_fits(p, kC / 2) : p.groups != 1) ||
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
  if constexpr (GROUPED) igemm_tiles<T, Epi, kIgemmGrouped>(ptrs, p, g, M);
  else if (T::kVec && pointwise) igemm_tiles<T, Epi, kIgemmPointwise>(ptrs, p, g, M);
  else igemm_tiles<T, Epi, kIgemmGeneral>(ptrs, p, g, M);
}

}  // namespace
}  // namespace jetplan::kernels::cuda
