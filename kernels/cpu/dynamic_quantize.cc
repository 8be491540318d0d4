#include "kernels/dynamic_quantize.h"

#include "kernels/quantization.h"

namespace jetplan::kernels::cpu {

void dynamic_quantize_linear(const DynamicQuantizeParams& p, const float* x, uint8_t* y,
                             float* y_scale, uint8_t* y_zero_point) {
  float lo = 0.f, hi = 0.f;  // the range always holds 0, so 0 quantizes exactly
  for (int64_t i = 0; i < p.count; ++i) {
    if (x[i] < lo) lo = x[i];
    if (x[i] > hi) hi = x[i];
  }
  const float scale = (hi == lo ? 1.f : hi - lo) / 255.f;
  float zp = 0.f - lo / scale;
  zp = zp < 0.f ? 0.f : (zp > 255.f ? 255.f : zp);
  const int32_t zero_point = static_cast<int32_t>(round_half_even(zp));
  *y_scale = scale;
  *y_zero_point = static_cast<uint8_t>(zero_point);
  for (int64_t i = 0; i < p.count; ++i) {
    const float q = x[i] / scale;  // rounded to float first, as quantize_linear
    y[i] = static_cast<uint8_t>(quantize_value(q, zero_point, DType::kUInt8));
  }
}

}  // namespace jetplan::kernels::cpu
