#include "kernels/quantize.h"

namespace jetplan::kernels::cpu {

void quantize_linear(const QuantizeLinearParams& p, const float* x, const float* scale,
                     const void* zero_point, void* y) {
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t ch = 0; ch < p.channels; ++ch) {
      const int64_t qi = p.per_channel ? ch : 0;
      const int32_t zp = p.has_zero_point ? load_quantized(p.qtype, zero_point, qi) : 0;
      const float s = scale[qi];
      const int64_t base = (o * p.channels + ch) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i) {
        // The quotient is rounded to float before rounding to an integer, as in ONNX's
        // reference and onnxruntime; double would round a few near-ties the other way.
        const float q = x[base + i] / s;
        store_quantized(p.qtype, y, base + i, quantize_value(q, zp, p.qtype));
      }
    }
}

}  // namespace jetplan::kernels::cpu
