#include "kernels/qlinear_matmul.h"

#include "kernels/quantization.h"

namespace jetplan::kernels::cpu {

void qlinear_matmul(const QLinearMatMulParams& p, const void* a, const float* a_scale,
                    const void* a_zero_point, const void* b, const float* b_scale,
                    const void* b_zero_point, const float* y_scale, const void* y_zero_point,
                    void* y) {
  const int32_t y_zp = load_quantized(p.y_type, y_zero_point, 0);
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    const int64_t a0 = bi * p.a_batch_stride, b0 = bi * p.b_batch_stride;
    for (int64_t m = 0; m < p.M; ++m) {
      const int64_t am = p.a_per_row ? m : 0;
      const int32_t a_zp = load_quantized(p.a_type, a_zero_point, am);
      for (int64_t n = 0; n < p.N; ++n) {
        const int64_t bn = p.b_per_column ? n : 0;
        const int32_t b_zp = load_quantized(p.b_type, b_zero_point, bn);
        int64_t acc = 0;
        for (int64_t k = 0; k < p.K; ++k)
          acc += int64_t{load_quantized(p.a_type, a, a0 + m * p.K + k) - a_zp} *
                 (load_quantized(p.b_type, b, b0 + k * p.N + n) - b_zp);
        const double v = wrap_int32(acc) * multiplier(a_scale[am], b_scale[bn], *y_scale);
        store_quantized(p.y_type, y, (bi * p.M + m) * p.N + n, quantize_value(v, y_zp, p.y_type));
      }
    }
  }
}

}  // namespace jetplan::kernels::cpu
