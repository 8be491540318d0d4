// The FP32 tiles of Float32 GPU plans' GEMM and conv kernels (jp_gemm_f32, jp_conv_igemm_f32):
// 64x64 tiles of the output, K 16 at a time through shared memory, 256 threads of 4x4 outputs,
// thread (r, c) = (tid / 16, tid % 16) owning rows r + 16 i and columns c + 16 j. FP32 FMAs in
// K order: what the CPU twins compute but for the order of the sums.
#pragma once

namespace jetplan::kernels::cuda {
namespace {

constexpr int kF32Tile = 64, kF32K = 16, kF32Threads = 256;
// One K stage of A (As[k][row]) or B (Bs[k][column]) in shared memory.
using F32Stage = float[kF32K][kF32Tile + 4];

// acc[i][j] += sum over the stage's k of As[k][r + 16 i] * Bs[k][c + 16 j].
__device__ __forceinline__ void f32_tile_fma(const F32Stage& As, const F32Stage& Bs, int r, int c,
                                             float (&acc)[4][4]) {
#pragma unroll
  for (int kk = 0; kk < kF32K; ++kk) {
    float av[4], bv[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) av[i] = As[kk][r + 16 * i];
#pragma unroll
    for (int j = 0; j < 4; ++j) bv[j] = Bs[kk][c + 16 * j];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
  }
}

// The K loop of one tile: for each stage of kF32K from 0 to K, fill(k0) writes the stage's A and B
// elements into As and Bs (zeros past K and the tile's edges), then the stage's FMAs.
template <typename Fill>
__device__ __forceinline__ void f32_tile_k_loop(const F32Stage& As, const F32Stage& Bs, int64_t K,
                                                int r, int c, Fill fill, float (&acc)[4][4]) {
  for (int64_t k0 = 0; k0 < K; k0 += kF32K) {
    fill(k0);
    __syncthreads();
    f32_tile_fma(As, Bs, r, c, acc);
    __syncthreads();  // the stage is rewritten next
  }
}

// The tile's outputs: store(m, n, acc) for each of the thread's 4x4 (row m0 + r + 16 i, column
// n0 + c + 16 j) inside M x N.
template <typename Store>
__device__ __forceinline__ void f32_tile_store(int64_t m0, int64_t n0, int r, int c, int64_t M,
                                               int64_t N, const float (&acc)[4][4], Store store) {
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t m = m0 + r + 16 * i, n = n0 + c + 16 * j;
      if (m < M && n < N) store(m, n, acc[i][j]);
    }
}

}  // namespace
}  // namespace jetplan::kernels::cuda
