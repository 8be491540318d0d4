// The Gemm family (Gemm, MatMul, batched MatMul): parameters and CPU twin (kernels/cpu/gemm.cc);
// CUDA kernels in kernels/cuda/gemm.cu.
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"

namespace jetplan::kernels {

// For i in [0, batch): y[i] (M x N) = act(alpha * opA(A[i]) * opB(B[i]) + beta * C + R[i])
// A[i] starts at a + i * a_batch_stride and is [M, K] row-major, or [K, M] when trans_a;
// B[i] starts at b + i * b_batch_stride and is [K, N], or [N, K] when trans_b (stride 0
// broadcasts one matrix to every batch). y is [batch, M, N] dense.
// C (optional) element (i, m, n) is c[i * c_stride_batch + m * c_stride_m + n * c_stride_n];
// zero strides broadcast. R (optional, has_residual) is dense like y: element (i, m, n) is
// r[(i * M + m) * N + n]; it is added once, after beta * C and before the activation.
struct GemmParams {
  int64_t batch = 1;
  int64_t M = 0, N = 0, K = 0;
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.f;
  float beta = 1.f;
  int64_t a_batch_stride = 0;
  int64_t b_batch_stride = 0;
  bool has_c = false;
  int64_t c_stride_batch = 0, c_stride_m = 0, c_stride_n = 0;
  bool has_residual = false;
  Activation act;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void gemm(const GemmParams& p, const float* a, const float* b, const float* c,
          const float* residual, float* y);
// For steps without a residual (p.has_residual false).
inline void gemm(const GemmParams& p, const float* a, const float* b, const float* c, float* y) {
  gemm(p, a, b, c, nullptr, y);
}

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/gemm.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// The mma variants assume 128 threads (4 warps), the gemv ones 256; all use static shared
// memory only. The split-K ones count arrivals in their workspace, which must start zeroed. The
// _f32out rows read FP16 and write a Float32 output (the output-cast epilogue).
#define JP_CUDA_VARIANTS_gemm(X, F) \
  X(F, jp_gemm_f16_mma64_nn, kF16, 128) \
  X(F, jp_gemm_f16_mma64_nt, kF16, 128) \
  X(F, jp_gemm_f16_mma64_tn, kF16, 128) \
  X(F, jp_gemm_f16_mma64_tt, kF16, 128) \
  X(F, jp_gemm_f16_mma32_nn, kF16, 128) \
  X(F, jp_gemm_f16_mma32_nt, kF16, 128) \
  X(F, jp_gemm_f16_mma32_tn, kF16, 128) \
  X(F, jp_gemm_f16_mma32_tt, kF16, 128) \
  X(F, jp_gemm_f16_mma32_splitk_nn, kF16, 128, kAny, 0, true) \
  X(F, jp_gemm_f16_mma32_splitk_nt, kF16, 128, kAny, 0, true) \
  X(F, jp_gemm_f16_mma32_splitk_tn, kF16, 128, kAny, 0, true) \
  X(F, jp_gemm_f16_mma32_splitk_tt, kF16, 128, kAny, 0, true) \
  X(F, jp_gemm_f16_gemv_bt, kF16, 256) \
  X(F, jp_gemm_f16_gemv_bn, kF16, 256) \
  X(F, jp_gemm_f16_mma64_nn_f32out, kF16, 128, kF32) \
  X(F, jp_gemm_f16_mma64_nt_f32out, kF16, 128, kF32) \
  X(F, jp_gemm_f16_mma32_nn_f32out, kF16, 128, kF32) \
  X(F, jp_gemm_f16_mma32_nt_f32out, kF16, 128, kF32) \
  X(F, jp_gemm_f16_gemv_bt_f32out, kF16, 256, kF32) \
  X(F, jp_gemm_f16_gemv_bn_f32out, kF16, 256, kF32) \
  X(F, jp_gemm_f32, kF32, 256)
