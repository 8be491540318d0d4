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

}  // namespace
}  // namespace jetplan::kernels::cuda
