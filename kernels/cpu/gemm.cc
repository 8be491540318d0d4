#include "kernels/activation.h"
#include "kernels/gemm.h"

namespace jetplan::kernels::cpu {

// Accumulates in double over k in increasing order; alpha, beta * C and the residual are applied
// in double too, and the result is rounded to float once before the activation.
void gemm(const GemmParams& p, const float* a, const float* b, const float* c,
          const float* residual, float* y) {
  // Element strides of op(A) [M, K] and op(B) [K, N] inside one batch's matrix.
  const int64_t a_m = p.trans_a ? 1 : p.K, a_k = p.trans_a ? p.M : 1;
  const int64_t b_k = p.trans_b ? 1 : p.N, b_n = p.trans_b ? p.K : 1;
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    const float* a_b = a + bi * p.a_batch_stride;
    const float* b_b = b + bi * p.b_batch_stride;
    float* y_b = y + bi * p.M * p.N;
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n) {
        double acc = 0.0;
        for (int64_t k = 0; k < p.K; ++k)
          acc += static_cast<double>(a_b[m * a_m + k * a_k]) * b_b[k * b_k + n * b_n];
        double v = static_cast<double>(p.alpha) * acc;
        if (p.has_c)
          v += static_cast<double>(p.beta) *
               c[bi * p.c_stride_batch + m * p.c_stride_m + n * p.c_stride_n];
        if (p.has_residual) v += static_cast<double>(residual[(bi * p.M + m) * p.N + n]);
        y_b[m * p.N + n] = apply_activation(p.act, static_cast<float>(v));
      }
  }
}

}  // namespace jetplan::kernels::cpu
