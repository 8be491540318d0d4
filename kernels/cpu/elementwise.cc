#include "kernels/elementwise.h"

#include <cstdint>

#include "kernels/cpu/dense_index.h"
#include "kernels/cpu/half.h"

namespace jetplan::kernels::cpu {

namespace {

// out[i] = f(a[i . a_strides], b[i . b_strides]) over the dense out_dims.
template <typename In, typename Out, typename F>
void broadcast_loop(const ElementwiseParams& p, const void* a, const void* b, void* y, F f) {
  const In* as = static_cast<const In*>(a);
  const In* bs = static_cast<const In*>(b);
  Out* out = static_cast<Out*>(y);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = 0; i < count; ++i) {
    const OperandOffsets off = operand_offsets(i, p.rank, p.out_dims, p.a_strides, p.b_strides);
    out[i] = f(as[off.a], bs[off.b]);
  }
}

template <typename T>
void compare_loop(const ElementwiseParams& p, const void* a, const void* b, void* y) {
  const ElementwiseOp op = p.op;
  broadcast_loop<T, unsigned char>(p, a, b, y, [op](T u, T v) -> unsigned char {
    return elementwise_compare_value<T>(op, u, v) ? 1 : 0;
  });
}

template <typename T>
void integer_loop(const ElementwiseParams& p, const void* a, const void* b, void* y) {
  const ElementwiseOp op = p.op;
  broadcast_loop<T, T>(p, a, b, y,
                       [op](T u, T v) { return elementwise_integer_value<T>(op, u, v); });
}

}  // namespace

void elementwise(const ElementwiseParams& p, const void* a, const void* b, void* y) {
  if (!elementwise_supported(p.op, p.dtype)) return;
  if (elementwise_is_comparison(p.op) || elementwise_is_logic(p.op)) {
    switch (p.dtype) {
      case DType::kFloat32:
        return compare_loop<float>(p, a, b, y);
      case DType::kFloat64:
        return compare_loop<double>(p, a, b, y);
      case DType::kInt8:
        return compare_loop<int8_t>(p, a, b, y);
      case DType::kUInt8:
        return compare_loop<uint8_t>(p, a, b, y);
      case DType::kInt32:
        return compare_loop<int32_t>(p, a, b, y);
      case DType::kInt64:
        return compare_loop<int64_t>(p, a, b, y);
      case DType::kBool:
        return compare_loop<uint8_t>(p, a, b, y);
      case DType::kInt16:
        return compare_loop<int16_t>(p, a, b, y);
      case DType::kUInt16:
        return compare_loop<uint16_t>(p, a, b, y);
      case DType::kUInt32:
        return compare_loop<uint32_t>(p, a, b, y);
      case DType::kUInt64:
        return compare_loop<uint64_t>(p, a, b, y);
      case DType::kBFloat16:
        return;  // elementwise_supported refuses it (plan load checks)
      case DType::kFloat16: {
        // Every half is exactly a float, so comparing the floats compares the halves.
        const ElementwiseOp op = p.op;
        return broadcast_loop<uint16_t, unsigned char>(
            p, a, b, y, [op](uint16_t u, uint16_t v) -> unsigned char {
              return elementwise_compare_value<float>(op, half_to_float(u), half_to_float(v)) ? 1
                                                                                              : 0;
            });
      }
    }
    return;
  }
  if (p.dtype == DType::kInt32) return integer_loop<int32_t>(p, a, b, y);
  if (p.dtype == DType::kInt64) return integer_loop<int64_t>(p, a, b, y);
  if (p.dtype == DType::kInt16) return integer_loop<int16_t>(p, a, b, y);
  if (p.dtype == DType::kUInt16) return integer_loop<uint16_t>(p, a, b, y);
  if (p.dtype == DType::kUInt32) return integer_loop<uint32_t>(p, a, b, y);
  if (p.dtype == DType::kUInt64) return integer_loop<uint64_t>(p, a, b, y);
  if (p.dtype == DType::kFloat64) {
    const ElementwiseOp op = p.op;
    return broadcast_loop<double, double>(
        p, a, b, y, [op](double u, double v) { return elementwise_float64_value(op, u, v); });
  }
  // Only float32 and float16 kFMod remain (elementwise_supported).
  if (p.dtype == DType::kFloat16) {
    return broadcast_loop<uint16_t, uint16_t>(p, a, b, y, [](uint16_t u, uint16_t v) {
      return half_from_float(fmod_value(half_to_float(u), half_to_float(v)));
    });
  }
  broadcast_loop<float, float>(p, a, b, y, [](float u, float v) { return fmod_value(u, v); });
}

}  // namespace jetplan::kernels::cpu
