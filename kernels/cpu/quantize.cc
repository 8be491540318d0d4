#include "kernels/quantize.h"

#include "kernels/cpu/quantize_channels.h"

namespace jetplan::kernels::cpu {

void quantize_linear(const QuantizeLinearParams& p, const float* x, const float* scale,
                     const void* zero_point, void* y) {
  if (p.layout != QuantizeLayout::kSame) {  // the image form: per tensor, channels padded
    const int32_t zp = p.has_zero_point ? load_quantized(p.qtype, zero_point, 0) : 0;
    const int64_t pixels = p.outer * p.inner;
    for (int64_t i = 0; i < pixels; ++i)
      for (int64_t c = 0; c < p.padded_channels; ++c) {
        const int32_t q = c < p.channels
                              ? quantize_value(x[quantize_image_source(p, i, c)] / scale[0], zp,
                                               p.qtype)
                              : zp;
        store_quantized(p.qtype, y, i * p.padded_channels + c, q);
      }
    return;
  }
  for_each_channel_run(p, scale, zero_point, [&](int64_t base, float s, int32_t zp) {
    for (int64_t i = 0; i < p.inner; ++i) {
      // The quotient is rounded to float before rounding to an integer, as in ONNX's
      // reference and onnxruntime; double would round a few near-ties the other way.
      const float q = x[base + i] / s;
      store_quantized(p.qtype, y, base + i, quantize_value(q, zp, p.qtype));
    }
  });
}

}  // namespace jetplan::kernels::cpu
