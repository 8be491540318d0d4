// The tensor-core GEMM of kernels/cuda/gemm.cu: BMx64x32 CTA tiles (BM 64 or 32), 4 warps of
// (BM / 2)x32, mma.sync m16n8k16 (FP16 in, FP32 accumulate) fed by ldmatrix from a 3-stage
// cp.async pipeline, and the fused epilogue (alpha, beta * C by strides, the residual, activation,
// an FP16 store, or FP32 for the output-cast variants: OutT).
//
// Shared memory holds each tile in the operand's stored layout (A [M,K] or [K,M], B [K,N] or
// [N,K]), rows padded by 16 bytes so the 8 row addresses of an ldmatrix hit distinct banks;
// ldmatrix.trans turns the M- or N-contiguous layouts into the mma fragments. Tiles stream with
// 16-byte cp.async when every row start is 16-byte aligned (contiguous dim and batch stride
// multiples of 8, base pointer aligned: checked here per launch and operand, not trusted from
// the plan); otherwise that operand's tiles are filled element by element (any shape, any
// stride), the next tile's global loads held in registers across the current tile's mma.
#pragma once

#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/gemm.h"

namespace jetplan::kernels::cuda::gemm {

constexpr int kBN = 64, kBK = 32, kStages = 3, kMmaThreads = 128;
constexpr int kPad = 8;  // halves: 16 bytes per smem row

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, int src_bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const __half* smem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const __half* smem) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(s));
}

__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Starts 16-byte copies of rows [r0, r0 + ROWS) x cols [c0, c0 + COLS) of the stored matrix g
// (row pitch ld, R x C elements, C a multiple of 8) into the smem tile s (pitch COLS + kPad);
// chunks outside the matrix are zero-filled.
template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile_async(__half* s, const __half* g, int64_t ld,
                                                int64_t r0, int64_t c0, int64_t R, int64_t C) {
  constexpr int kChunks = ROWS * COLS / 8;
  static_assert(kChunks % kMmaThreads == 0, "whole chunks per thread");
  // Thread t copies chunk column t % (COLS / 8) of rows t / (COLS / 8) + j * kRowStep.
  constexpr int kRowStep = kMmaThreads / (COLS / 8);
  const int r = static_cast<int>(threadIdx.x) / (COLS / 8);
  const int c = (static_cast<int>(threadIdx.x) % (COLS / 8)) * 8;
  const int64_t gc = c0 + c;
  const __half* src = g + (r0 + r) * ld + gc;
#pragma unroll
  for (int j = 0; j < kChunks / kMmaThreads; ++j) {
    const bool ok = r0 + r + j * kRowStep < R && gc < C;  // C % 8 == 0: all in or all out
    cp_async16(s + (r + j * kRowStep) * (COLS + kPad) + c, ok ? src + j * kRowStep * ld : g,
               ok ? 16 : 0);
  }
}

// The element-wise path in two halves: global loads into registers (before the current tile's
// mma), then shared stores (after it).
template <int ROWS, int COLS>
struct TileRegs {
  static constexpr int kCount = ROWS * COLS / kMmaThreads;
  __half v[kCount];
};
template <int ROWS, int COLS>
__device__ __forceinline__ void fetch_tile(TileRegs<ROWS, COLS>& t, const __half* g, int64_t ld,
                                           int64_t r0, int64_t c0, int64_t R, int64_t C) {
  static_assert(kMmaThreads % COLS == 0, "whole rows per pass");
  constexpr int kRowStep = kMmaThreads / COLS;
  const int r = static_cast<int>(threadIdx.x) / COLS;
  const int64_t gc = c0 + static_cast<int>(threadIdx.x) % COLS;
  const __half* src = g + (r0 + r) * ld + gc;
#pragma unroll
  for (int j = 0; j < TileRegs<ROWS, COLS>::kCount; ++j) {
    const bool ok = r0 + r + j * kRowStep < R && gc < C;
    t.v[j] = ok ? src[j * kRowStep * ld] : __float2half_rn(0.f);
  }
}
template <int ROWS, int COLS>
__device__ __forceinline__ void store_tile(__half* s, const TileRegs<ROWS, COLS>& t) {
#pragma unroll
  for (int j = 0; j < TileRegs<ROWS, COLS>::kCount; ++j) {
    const int i = j * kMmaThreads + static_cast<int>(threadIdx.x);
    s[(i / COLS) * (COLS + kPad) + i % COLS] = t.v[j];
  }
}

// A and B are the same kind of operand, BO x kBK tiles along their outer dim o (A's m, B's n)
// and k, stored either [O, K] (OUTER_MAJOR: A without trans_a, B with trans_b) or [K, O]. These
// load the tile at (o0, k0): by cp.async into the smem tile s, or into registers.
template <int BO, bool OUTER_MAJOR>
__device__ __forceinline__ void load_operand_async(__half* s, const __half* g, int64_t ld,
                                                   int64_t o0, int64_t k0, int64_t O, int64_t K) {
  if constexpr (OUTER_MAJOR) load_tile_async<BO, kBK>(s, g, ld, o0, k0, O, K);
  else load_tile_async<kBK, BO>(s, g, ld, k0, o0, K, O);
}
template <bool OUTER_MAJOR, int ROWS, int COLS>
__device__ __forceinline__ void fetch_operand(TileRegs<ROWS, COLS>& t, const __half* g, int64_t ld,
                                              int64_t o0, int64_t k0, int64_t O, int64_t K) {
  if constexpr (OUTER_MAJOR) fetch_tile(t, g, ld, o0, k0, O, K);
  else fetch_tile(t, g, ld, k0, o0, K, O);
}

// The output store: FP16, or FP32 (the output-cast epilogue: a float32 graph output is written
// by its producer, no Cast step after it).
__device__ __forceinline__ void store_out(__half* y, float v) { *y = __float2half_rn(v); }
__device__ __forceinline__ void store_out(float* y, float v) { *y = v; }
__device__ __forceinline__ void store_out2(__half* y, float a, float b) {
  *reinterpret_cast<__half2*>(y) = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void store_out2(float* y, float a, float b) {
  *reinterpret_cast<float2*>(y) = make_float2(a, b);
}
// The step's inputs after A and B: C (has_c), then the residual (has_residual).
__device__ __forceinline__ const __half* c_ptr(const StepPointers& ptrs, const GemmParams& p) {
  return p.has_c ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
}
__device__ __forceinline__ const __half* residual_ptr(const StepPointers& ptrs,
                                                      const GemmParams& p) {
  return p.has_residual ? static_cast<const __half*>(ptrs.in[p.has_c ? 3 : 2]) : nullptr;
}
// Pairs of outputs may be stored at once: N even and y aligned to a pair.
template <typename OutT>
__device__ __forceinline__ bool pairs_aligned(const GemmParams& p, const OutT* y) {
  return p.N % 2 == 0 && (reinterpret_cast<uintptr_t>(y) & (2 * sizeof(OutT) - 1)) == 0;
}

// Element (m, n) pair (n, n + 1) of one batch: alpha, beta * C, the residual, activation, store.
template <typename OutT>
__device__ __forceinline__ void epilogue_pair(const GemmParams& p, const __half* c,
                                              const __half* r, OutT* y, int64_t bi, int64_t m,
                                              int64_t n, float v0, float v1, bool pair_store) {
  if (m >= p.M || n >= p.N) return;
  float v[2] = {v0 * p.alpha, v1 * p.alpha};
  const bool two = n + 1 < p.N;
  const int64_t yi = (bi * p.M + m) * p.N + n;
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    if (e == 1 && !two) break;
    if (c != nullptr)
      v[e] += p.beta * __half2float(c[bi * p.c_stride_batch + m * p.c_stride_m +
                                      (n + e) * p.c_stride_n]);
    if (r != nullptr) v[e] += __half2float(r[yi + e]);
    v[e] = activation_value(p.act, v[e]);
  }
  if (two && pair_store) {
    store_out2(y + yi, v[0], v[1]);
  } else {
    store_out(y + yi, v[0]);
    if (two) store_out(y + yi + 1, v[1]);
  }
}

// Serial split-K (SPLIT): batch 1 only, gridDim.z = number of K slices. Workspace: one uint32
// arrival counter per output tile (kSplitCounterBytes, zero before the first launch: the
// variant's row sets zero_workspace; the last arriver puts it back to 0), then FP32 partial
// tiles [tile][slice][BM x 64]. Each CTA stores its slice's tile; the last of a tile to arrive
// adds the slices in slice order (the same bits whoever arrives last) and runs the epilogue.
__host__ __device__ constexpr uint64_t split_workspace_bytes(uint64_t tiles, uint64_t splits,
                                                             int bm) {
  return (tiles * 4 + 255) / 256 * 256 + tiles * splits * static_cast<uint64_t>(bm) * kBN * 4;
}

// Floats per row of the accumulator tile, staged in shared memory for the epilogue.
constexpr int kOutPitch = kBN + 4;

// One pipeline stage's mma: the warp's (BM / 2)x32 accumulators += its rows of the A tile ta
// times its columns of the B tile tb, each in its stored layout (ldmatrix.trans turns the M- or
// N-contiguous ones into fragments).
template <int BM, bool TA, bool TB>
__device__ __forceinline__ void mma_tile(float (&acc)[BM / 32][4][4], const __half* ta,
                                         const __half* tb, int wm, int wn, int lane) {
  constexpr int kMI = BM / 32;
  constexpr int kLda = (TA ? BM : kBK) + kPad, kLdb = (TB ? kBK : kBN) + kPad;
#pragma unroll
  for (int kk = 0; kk < kBK; kk += 16) {
    uint32_t af[kMI][4], bf[4][2];
#pragma unroll
    for (int i = 0; i < kMI; ++i) {
      const int mr = wm + i * 16;
      if (!TA) {
        ldmatrix_x4(af[i], ta + (mr + lane % 16) * kLda + kk + (lane / 16) * 8);
      } else {
        const int k = kk + lane % 8 + (lane / 16) * 8, m = mr + ((lane / 8) % 2) * 8;
        ldmatrix_x4_trans(af[i], ta + k * kLda + m);
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int nc = wn + j * 16;
      uint32_t r[4];
      if (TB) {
        const int n = nc + lane % 8 + (lane / 16) * 8, k = kk + ((lane / 8) % 2) * 8;
        ldmatrix_x4(r, tb + n * kLdb + k);
      } else {
        const int k = kk + lane % 8 + ((lane / 8) % 2) * 8, n = nc + (lane / 16) * 8;
        ldmatrix_x4_trans(r, tb + k * kLdb + n);
      }
      bf[2 * j][0] = r[0];
      bf[2 * j][1] = r[1];
      bf[2 * j + 1][0] = r[2];
      bf[2 * j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) mma_16816(acc[i][j], af[i], bf[j]);
  }
}

// The accumulators go through shared memory so the epilogue (activation code included)
// exists once, not per fragment, and a warp writes whole rows of y.
template <int BM>
__device__ __forceinline__ void stage_accumulators(float* so, const float (&acc)[BM / 32][4][4],
                                                   int wm, int wn, int lane) {
  constexpr int kMI = BM / 32;
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = wm + i * 16 + lane / 4, c = wn + j * 8 + (lane % 4) * 2;
      *reinterpret_cast<float2*>(so + r * kOutPitch + c) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(so + (r + 8) * kOutPitch + c) =
          make_float2(acc[i][j][2], acc[i][j][3]);
    }
}

// Serial split-K, this CTA's FP32 tile in so: stores it as the CTA's slice, counts the arrival,
// and in the last CTA of the tile to arrive sums every slice (in slice order) back into so.
// Returns whether this CTA is that last one (only it runs the epilogue). last_arrival: the
// kernel's __shared__ flag, thread 0's verdict for the whole CTA.
template <int BM>
__device__ __forceinline__ bool split_k_sum(const StepPointers& ptrs, float* so, uint64_t tiles,
                                            bool& last_arrival) {
  const uint64_t tile = static_cast<uint64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
  auto* counters = static_cast<uint32_t*>(ptrs.workspace);
  float* parts = reinterpret_cast<float*>(static_cast<unsigned char*>(ptrs.workspace) +
                                          split_workspace_bytes(tiles, 0, BM)) +
                 tile * gridDim.z * (BM * kBN);
  float* mine = parts + static_cast<uint64_t>(blockIdx.z) * (BM * kBN);
#pragma unroll 1
  for (int e = static_cast<int>(threadIdx.x); e < BM * kBN / 4; e += kMmaThreads) {
    const int r = e / (kBN / 4), c = (e % (kBN / 4)) * 4;
    __stcg(reinterpret_cast<float4*>(mine + r * kBN + c),
           *reinterpret_cast<const float4*>(so + r * kOutPitch + c));
  }
  __threadfence();  // this CTA's partial tile is visible before its arrival is
  __syncthreads();
  if (threadIdx.x == 0) {
    const uint32_t before = atomicAdd(counters + tile, 1u);
    last_arrival = before + 1 == gridDim.z;
    if (last_arrival) counters[tile] = 0;  // every slice has arrived: ready for a replay
  }
  __syncthreads();
  if (!last_arrival) return false;
  __threadfence();
#pragma unroll 1
  for (int e = static_cast<int>(threadIdx.x); e < BM * kBN / 4; e += kMmaThreads) {
    const int r = e / (kBN / 4), c = (e % (kBN / 4)) * 4;
    float4 sum = __ldcg(reinterpret_cast<const float4*>(parts + r * kBN + c));
    for (uint32_t z = 1; z < gridDim.z; ++z) {
      const float4 v =
          __ldcg(reinterpret_cast<const float4*>(parts + z * (BM * kBN) + r * kBN + c));
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    *reinterpret_cast<float4*>(so + r * kOutPitch + c) = sum;
  }
  __syncthreads();
  return true;
}

// TA: A is stored [K, M]; TB: B is stored [N, K]; BM: rows per CTA (64 or 32); OutT: y's element
// (__half, or float for the output-cast variants). A launch whose params disagree with the
// variant's layout (or a split launch with too small a workspace) computes nothing (the selector
// never makes one). Split-K adds C and the residual once, in the last arriver's epilogue.
template <int BM, bool TA, bool TB, bool SPLIT = false, typename OutT = __half>
__device__ __forceinline__ void gemm_mma(const StepPointers& ptrs, const GemmParams& p) {
  constexpr int kMI = BM / 32;  // m16 tiles per warp
  constexpr int kARows = TA ? kBK : BM, kACols = TA ? BM : kBK;
  constexpr int kBRows = TB ? kBN : kBK, kBCols = TB ? kBK : kBN;
  constexpr int kLda = kACols + kPad, kLdb = kBCols + kPad;
  constexpr int kStageBytes = kStages * (kARows * kLda + kBRows * kLdb) * 2;
  constexpr int kOutBytes = BM * kOutPitch * 4;
  __shared__ alignas(128) unsigned char smem[kStageBytes > kOutBytes ? kStageBytes : kOutBytes];
  __shared__ bool last_arrival;
  auto sa = reinterpret_cast<__half(*)[kARows * kLda]>(smem);
  auto sb = reinterpret_cast<__half(*)[kBRows * kLdb]>(smem + kStages * kARows * kLda * 2);
  auto so = reinterpret_cast<float*>(smem);

  if (p.trans_a != TA || p.trans_b != TB) return;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  if (m0 >= M || n0 >= N) return;  // whole CTA: no barrier is skipped by part of it

  const auto* A = static_cast<const __half*>(ptrs.in[0]);
  const auto* B = static_cast<const __half*>(ptrs.in[1]);
  const __half* C = c_ptr(ptrs, p);
  const __half* R = residual_ptr(ptrs, p);
  auto* Y = static_cast<OutT*>(ptrs.out[0]);
  const int64_t lda = TA ? M : K, ldb = TB ? K : N;
  const bool vec_a = lda % 8 == 0 && p.a_batch_stride % 8 == 0 && aligned16(A);
  const bool vec_b = ldb % 8 == 0 && p.b_batch_stride % 8 == 0 && aligned16(B);
  const bool pair_store = pairs_aligned(p, Y);

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = (warp / 2) * (BM / 2), wn = (warp % 2) * 32;
  int ktiles = static_cast<int>((K + kBK - 1) / kBK), kbase = 0;
  const uint64_t tiles = static_cast<uint64_t>(gridDim.x) * gridDim.y;
  if (SPLIT) {
    if (p.batch != 1 || ptrs.workspace == nullptr ||
        ptrs.workspace_bytes < split_workspace_bytes(tiles, gridDim.z, BM))
      return;
    const int per = (ktiles + static_cast<int>(gridDim.z) - 1) / static_cast<int>(gridDim.z);
    kbase = min(ktiles, static_cast<int>(blockIdx.z) * per);
    ktiles = min(ktiles, kbase + per) - kbase;
  }

  for (int64_t bi = SPLIT ? 0 : blockIdx.z; bi < p.batch; bi += SPLIT ? 1 : gridDim.z) {
    const __half* a = A + bi * p.a_batch_stride;
    const __half* b = B + bi * p.b_batch_stride;

    float acc[kMI][4][4];
#pragma unroll
    for (int i = 0; i < kMI; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

    const auto compute = [&](int stage) {
      mma_tile<BM, TA, TB>(acc, sa[stage], sb[stage], wm, wn, lane);
    };

    if (vec_a && vec_b) {  // the common case gets a loop of its own: no branches, no spills
      const auto load = [&](int stage, int kt) {
        const int64_t k0 = static_cast<int64_t>(kbase + kt) * kBK;
        load_operand_async<BM, !TA>(sa[stage], a, lda, m0, k0, M, K);
        load_operand_async<kBN, TB>(sb[stage], b, ldb, n0, k0, N, K);
      };
#pragma unroll
      for (int s = 0; s < kStages - 1; ++s) {
        if (s < ktiles) load(s, s);
        cp_async_commit();
      }
      for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<kStages - 2>();
        __syncthreads();  // tile kt landed for everyone; stage (kt - 1) % kStages is free
        const int next = kt + kStages - 1;
        if (next < ktiles) load(next % kStages, next);
        cp_async_commit();
        compute(kt % kStages);
      }
      cp_async_wait<0>();
    } else {
      // Each operand streams by cp.async when its rows are 16-byte aligned, else through
      // registers: fetched before the current tile's mma, stored to shared memory after it.
      TileRegs<kARows, kACols> ra;
      TileRegs<kBRows, kBCols> rb;
      const auto issue = [&](int stage, int kt) {  // async copies now, register fetches begun
        const int64_t k0 = static_cast<int64_t>(kbase + kt) * kBK;
        if (vec_a) load_operand_async<BM, !TA>(sa[stage], a, lda, m0, k0, M, K);
        else fetch_operand<!TA>(ra, a, lda, m0, k0, M, K);
        if (vec_b) load_operand_async<kBN, TB>(sb[stage], b, ldb, n0, k0, N, K);
        else fetch_operand<TB>(rb, b, ldb, n0, k0, N, K);
      };
      const auto finish_regs = [&](int stage) {
        if (!vec_a) store_tile(sa[stage], ra);
        if (!vec_b) store_tile(sb[stage], rb);
      };
  #pragma unroll
      for (int s = 0; s < kStages - 1; ++s) {
        if (s < ktiles) {
          issue(s, s);
          finish_regs(s);
        }
        cp_async_commit();
      }
      for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<kStages - 2>();
        __syncthreads();  // tile kt is in for everyone; stage (kt - 1) % kStages is free
        const int next = kt + kStages - 1;
        if (next < ktiles) issue(next % kStages, next);
        cp_async_commit();
        compute(kt % kStages);
        if (next < ktiles) finish_regs(next % kStages);
      }
      cp_async_wait<0>();
    }
    __syncthreads();  // every warp is done with the stages: they become the output tile

    stage_accumulators<BM>(so, acc, wm, wn, lane);
    __syncthreads();
    if (SPLIT && !split_k_sum<BM>(ptrs, so, tiles, last_arrival)) return;
#pragma unroll 1
    for (int e = static_cast<int>(threadIdx.x); e < BM * kBN / 2; e += kMmaThreads) {
      const int r = e / (kBN / 2), c = (e % (kBN / 2)) * 2;
      const float2 v = *reinterpret_cast<const float2*>(so + r * kOutPitch + c);
      epilogue_pair(p, C, R, Y, bi, m0 + r, n0 + c, v.x, v.y, pair_store);
    }
    __syncthreads();  // the next batch's prologue overwrites the output tile
  }
}

}  // namespace jetplan::kernels::cuda::gemm
