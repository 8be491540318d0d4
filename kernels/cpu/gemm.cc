#include <algorithm>

#include "kernels/activation.h"
#include "kernels/gemm.h"

namespace jetplan::kernels::cpu {

namespace {

// Rows and columns of y one pass over K accumulates at once: kRows rows of A share every load of
// B, and the accumulators (kRows x kCols doubles, 8 KB) stay in L1 while B's rows stream by.
constexpr int64_t kRows = 4, kCols = 256;
// K a transposed B's panel holds (kDepth x kCols floats, 32 KB).
constexpr int64_t kDepth = 32;

}  // namespace

// Accumulates in double over k in increasing order; alpha, beta * C and the residual are applied
// in double too, and the result is rounded to float once before the activation. Each element's
// sum is the same sequence of double operations as a dot product over k; the loops only visit
// the elements in blocks (a row of B's block at a time), so B streams through the cache once per
// kRows rows of A instead of once per element.
void gemm(const GemmParams& p, const float* a, const float* b, const float* c,
          const float* residual, float* y) {
  // Element strides of op(A) [M, K] and op(B) [K, N] inside one batch's matrix.
  const int64_t a_m = p.trans_a ? 1 : p.K, a_k = p.trans_a ? p.M : 1;
  const int64_t b_k = p.trans_b ? 1 : p.N, b_n = p.trans_b ? p.K : 1;
  double acc[kRows][kCols];
  float panel[kDepth * kCols];
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    const float* a_b = a + bi * p.a_batch_stride;
    const float* b_b = b + bi * p.b_batch_stride;
    float* y_b = y + bi * p.M * p.N;
    for (int64_t m0 = 0; m0 < p.M; m0 += kRows) {
      const int64_t rows = std::min(kRows, p.M - m0);
      for (int64_t n0 = 0; n0 < p.N; n0 += kCols) {
        const int64_t cols = std::min(kCols, p.N - n0);
        for (int64_t r = 0; r < rows; ++r) std::fill_n(acc[r], cols, 0.0);
        for (int64_t k0 = 0; k0 < p.K; k0 += kDepth) {
          const int64_t depth = std::min(kDepth, p.K - k0);
          // B's block as rows of contiguous columns: in place where B's rows are (not
          // transposed), else copied into `panel` first (a transposed B's columns lie K apart).
          const float* rows_of_b = b_b + k0 * b_k + n0 * b_n;
          int64_t row_stride = b_k;
          if (b_n != 1) {
            for (int64_t k = 0; k < depth; ++k)
              for (int64_t j = 0; j < cols; ++j) panel[k * kCols + j] = rows_of_b[k * b_k + j * b_n];
            rows_of_b = panel;
            row_stride = kCols;
          }
          for (int64_t k = 0; k < depth; ++k) {
            const float* b_row = rows_of_b + k * row_stride;
            for (int64_t r = 0; r < rows; ++r) {
              const double av = static_cast<double>(a_b[(m0 + r) * a_m + (k0 + k) * a_k]);
              double* acc_r = acc[r];
              for (int64_t j = 0; j < cols; ++j) acc_r[j] += av * b_row[j];
            }
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t m = m0 + r;
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t n = n0 + j;
            double v = static_cast<double>(p.alpha) * acc[r][j];
            if (p.has_c)
              v += static_cast<double>(p.beta) *
                   c[bi * p.c_stride_batch + m * p.c_stride_m + n * p.c_stride_n];
            if (p.has_residual) v += static_cast<double>(residual[(bi * p.M + m) * p.N + n]);
            y_b[m * p.N + n] = apply_activation(p.act, static_cast<float>(v));
          }
        }
      }
    }
  }
}

}  // namespace jetplan::kernels::cpu
