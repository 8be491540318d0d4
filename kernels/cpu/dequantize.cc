#include "kernels/dequantize.h"

namespace jetplan::kernels::cpu {

void dequantize_linear(const QuantizeLinearParams& p, const void* x, const float* scale,
                       const void* zero_point, float* y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t ch = 0; ch < p.channels; ++ch) {
      const int64_t qi = p.per_channel ? ch : 0;
      const int32_t zp = p.has_zero_point ? load_quantized(p.qtype, zero_point, qi) : 0;
      const float s = scale[qi];
      const int64_t base = (o * p.channels + ch) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i)
        y[base + i] = static_cast<float>(load_quantized(p.qtype, x, base + i) - zp) * s;
    }
}

}  // namespace jetplan::kernels::cpu
