// Gemm family on the GPU (ONNX Gemm and MatMul):
// y[i] = act(alpha * opA(A[i]) opB(B[i]) + beta * C + R[i]), FP16 storage, FP32 accumulation.
// Twin: kernels/cpu/gemm.cc. Inputs: A, B, C (when has_c), R (when has_residual, dense like y);
// output y [batch, M, N] dense, FP16 (or FP32: the _f32out variants, the output-cast epilogue of
// a float32 graph output; for trans_a false, without split-K).
//   jp_gemm_f16_mma{64,32}_{nn,nt,tn,tt}: tensor cores (gemm_mma.cuh), one per row tile (64 or
//       32) and (trans_a, trans_b); grid (ceil(N / 64), ceil(M / tile), batch), 128 threads.
//   jp_gemm_f16_mma32_splitk_{nn,nt,tn,tt}: batch 1, K split over grid.z CTAs that meet in the
//       workspace (serial split-K, fixed summation order: gemm_mma.cuh); zero_workspace.
//   jp_gemm_f32: Float32 storage and FP32 arithmetic (Float32 GPU plans), every form: 64x64
//       tiles through shared memory, 256 threads; grid (ceil(N / 64), ceil(M / 64), batch).
//   jp_gemm_f16_gemv_bt / _bn: M <= 8 (batch-1 FC layers), B stored [N, K] / [K, N]; K split
//       across the lanes and warps of a CTA and summed in a fixed order (deterministic);
//       grid (ceil(N / 2), 1, batch) / (ceil(N / 64), 1, batch), 256 threads.
// Every variant loops over batches with stride gridDim.z and bounds every index by the params.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/fp32_tile.cuh"
#include "kernels/cuda/gemm_mma.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/gemm.h"

namespace jetplan::kernels::cuda::gemm {
namespace {

constexpr int kGemvMaxM = 8, kGemvThreads = 256, kGemvWarps = kGemvThreads / 32;
constexpr int kGemvBnCols = 64;  // output columns per CTA of gemv_bn
// gemv_bt: warps per output column (each sums a slice of K), and so columns per CTA.
constexpr int kGemvSplit = 4, kGemvBtCols = kGemvWarps / kGemvSplit;

__device__ __forceinline__ void unpack8(const uint4& v, float (&f)[8]) {
  const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 t = __half22float2(h[i]);
    f[2 * i] = t.x;
    f[2 * i + 1] = t.y;
  }
}

__device__ __forceinline__ float finish(const GemmParams& p, const __half* c, const __half* r,
                                        int64_t bi, int64_t m, int64_t n, float acc) {
  float v = p.alpha * acc;
  if (c != nullptr)
    v += p.beta * __half2float(c[bi * p.c_stride_batch + m * p.c_stride_m + n * p.c_stride_n]);
  if (r != nullptr) v += __half2float(r[(bi * p.M + m) * p.N + n]);
  return activation_value(p.act, v);
}

// What both gemv kernels read: the operands (C and R null when absent), M (at most kGemvMaxM)
// and A's element strides along m and k (A is stored [K, M] under trans_a).
template <typename OutT>
struct GemvOperands {
  const __half* A;
  const __half* B;
  const __half* C;
  const __half* R;
  OutT* Y;
  int M;
  int64_t a_m, a_k;
};
template <typename OutT>
__device__ __forceinline__ GemvOperands<OutT> gemv_operands(const StepPointers& ptrs,
                                                            const GemmParams& p) {
  return {static_cast<const __half*>(ptrs.in[0]), static_cast<const __half*>(ptrs.in[1]),
          c_ptr(ptrs, p),
          residual_ptr(ptrs, p),
          static_cast<OutT*>(ptrs.out[0]),
          static_cast<int>(p.M),
          p.trans_a ? 1 : p.K,
          p.trans_a ? p.M : 1};
}

// B stored [N, K]: a CTA owns kGemvBtCols output columns, kGemvSplit warps each: warp w of
// column n sums its slice of K (lanes stride over it, 8 halves at a time when rows are 16-byte
// aligned), a butterfly adds the lanes, then the slices meet in shared memory and are added in
// slice order (fixed: the bits do not depend on timing). Splitting K keeps enough loads in
// flight to stream the weights (one warp a column left most SMs with 8 warps at batch 1).
template <typename OutT>
__device__ void gemv_bt(const StepPointers& ptrs, const GemmParams& p) {
  __shared__ float part[kGemvWarps][kGemvMaxM];
  if (!p.trans_b || p.M > kGemvMaxM) return;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int col = warp / kGemvSplit, slice = warp % kGemvSplit;
  const auto [A, B, C, R, Y, M, a_m, a_k] = gemv_operands<OutT>(ptrs, p);
  const int64_t K = p.K;
  const bool vec_b = K % 8 == 0 && p.b_batch_stride % 8 == 0 && aligned16(B);
  const bool vec_a = vec_b && !p.trans_a && p.a_batch_stride % 8 == 0 && aligned16(A);
  // This warp's slice of K, a multiple of 8 long (so 16-byte loads stay aligned).
  const int64_t per = (K + kGemvSplit * 8 - 1) / (kGemvSplit * 8) * 8;
  // Grid-stride over column groups and batches (the same trip counts for the whole CTA, so the
  // barriers below are reached by every thread).
  const int64_t col_groups = (p.N + kGemvBtCols - 1) / kGemvBtCols;
  for (int64_t cg = blockIdx.x; cg < col_groups; cg += gridDim.x)
  for (int64_t bi = blockIdx.z; bi < p.batch; bi += gridDim.z) {
    const int64_t n = cg * kGemvBtCols + col;
    const bool n_ok = n < p.N;
    const int64_t k0 = slice * per, k1 = n_ok ? (k0 + per < K ? k0 + per : K) : k0;
    const __half* a = A + bi * p.a_batch_stride;
    const __half* brow = B + bi * p.b_batch_stride + (n_ok ? n : 0) * K;
    float acc[kGemvMaxM];
#pragma unroll
    for (int m = 0; m < kGemvMaxM; ++m) acc[m] = 0.f;
    if (vec_b) {
#pragma unroll 4
      for (int64_t k = k0 + lane * 8; k < k1; k += 32 * 8) {
        float bv[8];
        unpack8(*reinterpret_cast<const uint4*>(brow + k), bv);
#pragma unroll
        for (int m = 0; m < kGemvMaxM; ++m) {
          if (m >= M) break;
          float av[8];
          if (vec_a) {
            unpack8(*reinterpret_cast<const uint4*>(a + m * K + k), av);
          } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) av[e] = __half2float(a[m * a_m + (k + e) * a_k]);
          }
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[m] = fmaf(av[e], bv[e], acc[m]);
        }
      }
    } else {
      for (int64_t k = k0 + lane; k < k1; k += 32) {
        const float bv = __half2float(brow[k]);
#pragma unroll
        for (int m = 0; m < kGemvMaxM; ++m) {
          if (m >= M) break;
          acc[m] = fmaf(__half2float(a[m * a_m + k * a_k]), bv, acc[m]);
        }
      }
    }
#pragma unroll
    for (int m = 0; m < kGemvMaxM; ++m)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[m] += __shfl_xor_sync(0xffffffffu, acc[m], off);
    // acc is the same in every lane after the butterfly: lane m keeps row m's.
#pragma unroll
    for (int m = 0; m < kGemvMaxM; ++m)
      if (lane == m) part[warp][m] = acc[m];
    __syncthreads();
    // Slice 0's lane m adds row m's slices in order and stores it.
    if (slice == 0 && lane < M && n_ok) {
      float s = 0.f;
#pragma unroll
      for (int j = 0; j < kGemvSplit; ++j) s += part[warp + j][lane];
      store_out(Y + (bi * p.M + lane) * p.N + n, finish(p, C, R, bi, lane, n, s));
    }
    __syncthreads();  // part is rewritten by the next column group or batch
  }
}

// B stored [K, N]: a CTA owns 64 output columns (2 per lane) at a time, grid-stride; warp w
// sums k = w, w + 8, ...; the 8 partial sums meet in shared memory and are added in warp order.
template <typename OutT>
__device__ void gemv_bn(const StepPointers& ptrs, const GemmParams& p) {
  __shared__ float part[kGemvWarps][kGemvMaxM][kGemvBnCols];
  if (p.trans_b || p.M > kGemvMaxM) return;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const auto [A, B, C, R, Y, M, a_m, a_k] = gemv_operands<OutT>(ptrs, p);
  const int64_t N = p.N, K = p.K;
  const bool vec_b = N % 2 == 0 && p.b_batch_stride % 2 == 0 &&
                     (reinterpret_cast<uintptr_t>(B) & 3u) == 0;
  for (int64_t n0 = static_cast<int64_t>(blockIdx.x) * kGemvBnCols; n0 < N;
       n0 += static_cast<int64_t>(gridDim.x) * kGemvBnCols)
  for (int64_t bi = blockIdx.z; bi < p.batch; bi += gridDim.z) {
    const int64_t n = n0 + lane * 2;
    const __half* a = A + bi * p.a_batch_stride;
    const __half* b = B + bi * p.b_batch_stride;
    float acc[kGemvMaxM][2];
#pragma unroll
    for (int m = 0; m < kGemvMaxM; ++m) acc[m][0] = acc[m][1] = 0.f;
    if (n < N) {
#pragma unroll 4
      for (int64_t k = warp; k < K; k += kGemvWarps) {
        float b0, b1 = 0.f;
        if (vec_b) {  // N even: n + 1 < N too
          const float2 t = __half22float2(*reinterpret_cast<const __half2*>(b + k * N + n));
          b0 = t.x;
          b1 = t.y;
        } else {
          b0 = __half2float(b[k * N + n]);
          if (n + 1 < N) b1 = __half2float(b[k * N + n + 1]);
        }
#pragma unroll
        for (int m = 0; m < kGemvMaxM; ++m) {
          if (m >= M) break;
          const float av = __half2float(a[m * a_m + k * a_k]);
          acc[m][0] = fmaf(av, b0, acc[m][0]);
          acc[m][1] = fmaf(av, b1, acc[m][1]);
        }
      }
    }
#pragma unroll
    for (int m = 0; m < kGemvMaxM; ++m) {
      part[warp][m][lane * 2] = acc[m][0];
      part[warp][m][lane * 2 + 1] = acc[m][1];
    }
    __syncthreads();
    for (int o = static_cast<int>(threadIdx.x); o < kGemvMaxM * kGemvBnCols; o += kGemvThreads) {
      const int m = o / kGemvBnCols, c = o % kGemvBnCols;
      const int64_t nn = n0 + c;
      if (m >= M || nn >= N) continue;
      float s = 0.f;
#pragma unroll
      for (int w = 0; w < kGemvWarps; ++w) s += part[w][m][c];
      store_out(Y + (bi * p.M + m) * N + nn, finish(p, C, R, bi, m, nn, s));
    }
    __syncthreads();  // part is rewritten by the next batch
  }
}

// Float32 storage and arithmetic (GPU plans of --precision fp32, as the CPU twin computes), on
// fp32_tile.cuh's tiles. A and B are read element by element by their strides, so every
// (trans_a, trans_b) and batch stride takes the one kernel. Grid (ceil(N / 64), ceil(M / 64),
// batches), looping over the rest of the batches.
__device__ void gemm_f32(const StepPointers& ptrs, const GemmParams& p) {
  __shared__ F32Stage As, Bs;
  const float* A = static_cast<const float*>(ptrs.in[0]);
  const float* B = static_cast<const float*>(ptrs.in[1]);
  const float* C = p.has_c ? static_cast<const float*>(ptrs.in[2]) : nullptr;
  const float* R = p.has_residual ? static_cast<const float*>(ptrs.in[p.has_c ? 3 : 2]) : nullptr;
  float* Y = static_cast<float*>(ptrs.out[0]);
  if (blockDim.x != kF32Threads) return;  // not this kernel's launch (an untrusted plan)
  const int64_t M = p.M, N = p.N, K = p.K;
  const int tid = int(threadIdx.x), tx = tid % 16, ty = tid / 16;
  const int64_t m0 = int64_t(blockIdx.y) * kF32Tile, n0 = int64_t(blockIdx.x) * kF32Tile;
  // A's element (m, k) and B's (k, n) of one batch.
  const int64_t a_m = p.trans_a ? 1 : K, a_k = p.trans_a ? M : 1;
  const int64_t b_k = p.trans_b ? 1 : N, b_n = p.trans_b ? K : 1;
  for (int64_t bi = blockIdx.z; bi < p.batch; bi += gridDim.z) {
    const float* a = A + bi * p.a_batch_stride;
    const float* b = B + bi * p.b_batch_stride;
    float acc[4][4] = {};
    // 64 x 16 elements of each operand a stage, four a thread.
    f32_tile_k_loop(As, Bs, K, ty, tx, [&](int64_t k0) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int idx = tid + e * kF32Threads, r = idx % kF32Tile, kk = idx / kF32Tile;
        const int64_t m = m0 + r, n = n0 + r, k = k0 + kk;
        As[kk][r] = m < M && k < K ? a[m * a_m + k * a_k] : 0.f;
        Bs[kk][r] = n < N && k < K ? b[k * b_k + n * b_n] : 0.f;
      }
    }, acc);
    f32_tile_store(m0, n0, ty, tx, M, N, acc, [&](int64_t m, int64_t n, float v) {
      v *= p.alpha;
      if (C != nullptr) v += p.beta * C[bi * p.c_stride_batch + m * p.c_stride_m + n * p.c_stride_n];
      if (R != nullptr) v += R[(bi * M + m) * N + n];
      Y[(bi * M + m) * N + n] = activation_value(p.act, v);
    });
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda::gemm

using jetplan::kernels::GemmParams;
using jetplan::kernels::cuda::StepPointers;
namespace g = jetplan::kernels::cuda::gemm;

// The tensor-core variants: BM-row tiles (64: at least 3 blocks per SM, 32: 4), A and B
// transposed or not, serial split-K, the output type (a Float32 y is the output-cast epilogue:
// FP16 inputs, a graph output written by its producer).
#define JP_GEMM_MMA(name, bm, min_blocks, ta, tb, split, Out)                \
  extern "C" __global__ void __launch_bounds__(g::kMmaThreads, min_blocks) \
      name(StepPointers ptrs, const GemmParams p) {                          \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    g::gemm_mma<bm, ta, tb, split, Out>(ptrs, p);                            \
  }
JP_GEMM_MMA(jp_gemm_f16_mma64_nn, 64, 3, false, false, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma64_nt, 64, 3, false, true, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma64_tn, 64, 3, true, false, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma64_tt, 64, 3, true, true, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_nn, 32, 4, false, false, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_nt, 32, 4, false, true, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_tn, 32, 4, true, false, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_tt, 32, 4, true, true, false, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_splitk_nn, 32, 4, false, false, true, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_splitk_nt, 32, 4, false, true, true, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_splitk_tn, 32, 4, true, false, true, __half)
JP_GEMM_MMA(jp_gemm_f16_mma32_splitk_tt, 32, 4, true, true, true, __half)
JP_GEMM_MMA(jp_gemm_f16_mma64_nn_f32out, 64, 3, false, false, false, float)
JP_GEMM_MMA(jp_gemm_f16_mma64_nt_f32out, 64, 3, false, true, false, float)
JP_GEMM_MMA(jp_gemm_f16_mma32_nn_f32out, 32, 4, false, false, false, float)
JP_GEMM_MMA(jp_gemm_f16_mma32_nt_f32out, 32, 4, false, true, false, float)
#undef JP_GEMM_MMA

// The gemv variants (M <= kGemvMaxM): B transposed ("bt") or not, the output type.
#define JP_GEMV(name, kernel, Out)                                         \
  extern "C" __global__ void __launch_bounds__(256) name(StepPointers ptrs, \
                                                         const GemmParams p) { \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    g::kernel<Out>(ptrs, p);                                                \
  }
JP_GEMV(jp_gemm_f16_gemv_bt, gemv_bt, __half)
JP_GEMV(jp_gemm_f16_gemv_bn, gemv_bn, __half)
JP_GEMV(jp_gemm_f16_gemv_bt_f32out, gemv_bt, float)
JP_GEMV(jp_gemm_f16_gemv_bn_f32out, gemv_bn, float)
#undef JP_GEMV

extern "C" __global__ void __launch_bounds__(256) jp_gemm_f32(StepPointers ptrs, const GemmParams p) {
  jetplan::kernels::cuda::pdl_wait();
  jetplan::kernels::cuda::pdl_trigger();
  g::gemm_f32(ptrs, p);
}
