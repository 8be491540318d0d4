// The tensor-core GEMM of kernels/cuda/gemm.cu: 64x64x32 CTA tiles, 4 warps of 32x32, mma.sync
// m16n8k16 (FP16 in, FP32 accumulate) fed by ldmatrix from a 3-stage cp.async pipeline, and the
// fused epilogue (alpha, beta * C by strides, activation, FP16 store).
//
// Shared memory holds each tile in the operand's stored layout (A [M,K] or [K,M], B [K,N] or
// [N,K]), rows padded by 16 bytes so the 8 row addresses of an ldmatrix hit distinct banks;
// ldmatrix.trans turns the M- or N-contiguous layouts into the mma fragments. Tiles stream with
// 16-byte cp.async when every row start is 16-byte aligned (contiguous dims and batch strides
// multiples of 8, base pointers aligned: checked here per launch, not trusted from the plan);
// otherwise the same tiles are filled element by element (any shape, any stride).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda::gemm {

constexpr int kBM = 64, kBN = 64, kBK = 32, kStages = 3, kMmaThreads = 128;
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

// Copies rows [r0, r0 + ROWS) x cols [c0, c0 + COLS) of the stored matrix g (row pitch ld,
// R x C elements) into the smem tile s (pitch COLS + kPad); outside the matrix: zeros.
template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile(__half* s, const __half* g, int64_t ld, int64_t r0,
                                          int64_t c0, int64_t R, int64_t C, bool vec) {
  constexpr int kLds = COLS + kPad;
  if (vec) {
    constexpr int kChunks = ROWS * COLS / 8;
    static_assert(kChunks % kMmaThreads == 0, "whole chunks per thread");
#pragma unroll
    for (int j = 0; j < kChunks / kMmaThreads; ++j) {
      const int i = j * kMmaThreads + static_cast<int>(threadIdx.x);
      const int r = i / (COLS / 8), c = (i % (COLS / 8)) * 8;
      const int64_t gr = r0 + r, gc = c0 + c;
      // With C a multiple of 8, a chunk is wholly inside or wholly outside.
      const bool ok = gr < R && gc < C;
      cp_async16(s + r * kLds + c, ok ? g + gr * ld + gc : g, ok ? 16 : 0);
    }
  } else {
#pragma unroll 4
    for (int i = static_cast<int>(threadIdx.x); i < ROWS * COLS; i += kMmaThreads) {
      const int r = i / COLS, c = i % COLS;
      const int64_t gr = r0 + r, gc = c0 + c;
      s[r * kLds + c] = (gr < R && gc < C) ? g[gr * ld + gc] : __float2half_rn(0.f);
    }
  }
}

// Element (m, n) pair (n, n + 1) of one batch: alpha, beta * C, activation, FP16 store.
__device__ __forceinline__ void epilogue_pair(const GemmParams& p, const __half* c, __half* y,
                                              int64_t bi, int64_t m, int64_t n, float v0,
                                              float v1, bool pair_store) {
  if (m >= p.M || n >= p.N) return;
  float v[2] = {v0 * p.alpha, v1 * p.alpha};
  const bool two = n + 1 < p.N;
#pragma unroll
  for (int e = 0; e < 2; ++e) {
    if (e == 1 && !two) break;
    if (c != nullptr)
      v[e] += p.beta * __half2float(c[bi * p.c_stride_batch + m * p.c_stride_m +
                                      (n + e) * p.c_stride_n]);
    v[e] = apply_activation(p.act, v[e]);
  }
  const int64_t yi = (bi * p.M + m) * p.N + n;
  if (two && pair_store) {
    *reinterpret_cast<__half2*>(y + yi) = __floats2half2_rn(v[0], v[1]);
  } else {
    y[yi] = __float2half_rn(v[0]);
    if (two) y[yi + 1] = __float2half_rn(v[1]);
  }
}

// TA: A is stored [K, M]; TB: B is stored [N, K]. A launch whose params disagree with the
// variant's layout computes nothing (the selector never makes one).
template <bool TA, bool TB>
__device__ __forceinline__ void gemm_mma(const StepPointers& ptrs, const GemmParams& p) {
  constexpr int kARows = TA ? kBK : kBM, kACols = TA ? kBM : kBK;
  constexpr int kBRows = TB ? kBN : kBK, kBCols = TB ? kBK : kBN;
  constexpr int kLda = kACols + kPad, kLdb = kBCols + kPad;
  __shared__ alignas(128) __half sa[kStages][kARows * kLda];
  __shared__ alignas(128) __half sb[kStages][kBRows * kLdb];

  if (p.trans_a != TA || p.trans_b != TB) return;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * kBM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kBN;
  if (m0 >= M || n0 >= N) return;  // whole CTA: no barrier is skipped by part of it

  const auto* A = static_cast<const __half*>(ptrs.in[0]);
  const auto* B = static_cast<const __half*>(ptrs.in[1]);
  const auto* C = p.has_c ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
  auto* Y = static_cast<__half*>(ptrs.out[0]);
  const int64_t lda = TA ? M : K, ldb = TB ? K : N;
  const bool vec = lda % 8 == 0 && ldb % 8 == 0 && p.a_batch_stride % 8 == 0 &&
                   p.b_batch_stride % 8 == 0 && aligned16(A) && aligned16(B);
  const bool pair_store = N % 2 == 0 && (reinterpret_cast<uintptr_t>(Y) & 3u) == 0;

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  const int ktiles = static_cast<int>((K + kBK - 1) / kBK);

  for (int64_t bi = blockIdx.z; bi < p.batch; bi += gridDim.z) {
    const __half* a = A + bi * p.a_batch_stride;
    const __half* b = B + bi * p.b_batch_stride;
    auto load = [&](int stage, int kt) {
      const int64_t k0 = static_cast<int64_t>(kt) * kBK;
      if (TA) load_tile<kBK, kBM>(sa[stage], a, lda, k0, m0, K, M, vec);
      else load_tile<kBM, kBK>(sa[stage], a, lda, m0, k0, M, K, vec);
      if (TB) load_tile<kBN, kBK>(sb[stage], b, ldb, n0, k0, N, K, vec);
      else load_tile<kBK, kBN>(sb[stage], b, ldb, k0, n0, K, N, vec);
    };

    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

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

      const __half* ta = sa[kt % kStages];
      const __half* tb = sb[kt % kStages];
#pragma unroll
      for (int kk = 0; kk < kBK; kk += 16) {
        uint32_t af[2][4], bf[4][2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
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
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) mma_16816(acc[i][j], af[i], bf[j]);
      }
    }
    cp_async_wait<0>();
    __syncthreads();  // the next batch's prologue overwrites the stages

#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int64_t m = m0 + wm + i * 16 + lane / 4;
        const int64_t n = n0 + wn + j * 8 + (lane % 4) * 2;
        epilogue_pair(p, C, Y, bi, m, n, acc[i][j][0], acc[i][j][1], pair_store);
        epilogue_pair(p, C, Y, bi, m + 8, n, acc[i][j][2], acc[i][j][3], pair_store);
      }
  }
}

}  // namespace jetplan::kernels::cuda::gemm
