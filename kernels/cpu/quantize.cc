#include <cmath>

#include "kernels/cpu/seq_quant_ops.h"

namespace jetplan::kernels::cpu {

namespace {

int32_t load_quantized(DType t, const void* base, int64_t i) {
  // kInt8 or kUInt8: the only quantized types a validated plan holds.
  return t == DType::kInt8 ? int32_t{static_cast<const int8_t*>(base)[i]}
                           : int32_t{static_cast<const uint8_t*>(base)[i]};
}

void store_quantized(DType t, void* base, int64_t i, int32_t v) {
  if (t == DType::kInt8)
    static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v);
  else
    static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v);
}

}  // namespace

double round_half_even(double v) {
  if (std::isnan(v)) return 0.0;
  // v - trunc(v) is exact (Sterbenz for |v| >= 1, trunc(v) = 0 below), so a tie is a true tie;
  // v / 2 is exact too, and round(v / 2) picks the even neighbour of a tie.
  if (std::fabs(v - std::trunc(v)) == 0.5) return 2.0 * std::round(v / 2.0);
  return std::round(v);
}

int32_t quantize_value(double v, int32_t zero_point, DType qtype) {
  const double lo = qtype == DType::kInt8 ? -128.0 : 0.0;
  const double hi = qtype == DType::kInt8 ? 127.0 : 255.0;
  // Sum and clamp in double: infinities and huge values saturate instead of overflowing int32.
  const double q = round_half_even(v) + zero_point;
  return static_cast<int32_t>(q < lo ? lo : (q > hi ? hi : q));
}

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
