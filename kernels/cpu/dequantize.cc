#include "kernels/dequantize.h"

#include "kernels/cpu/quantize_channels.h"

namespace jetplan::kernels::cpu {

void dequantize_linear(const QuantizeLinearParams& p, const void* x, const float* scale,
                       const void* zero_point, float* y) {
  for_each_channel_run(p, scale, zero_point, [&](int64_t base, float s, int32_t zp) {
    for (int64_t i = 0; i < p.inner; ++i)
      y[base + i] = static_cast<float>(load_quantized(p.qtype, x, base + i) - zp) * s;
  });
}

}  // namespace jetplan::kernels::cpu
