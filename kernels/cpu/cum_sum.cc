#include "kernels/cum_sum.h"

#include "kernels/cpu/half.h"

namespace jetplan::kernels::cpu {
namespace {

// Each lane in order: T the elements, Acc what they are summed (multiplied) in. Integers
// combine as unsigned (two's-complement wrap, defined, as ONNX Runtime's sums and products).
template <typename T, typename Acc, typename Load, typename Store>
void lanes(const CumSumParams& p, const T* x, T* y, Load load, Store store) {
  for (int64_t lane = 0; lane < p.outer * p.inner; ++lane) {
    const CumSumLane l = cum_sum_lane(p, lane);
    Acc acc = cum_sum_identity<Acc>(p);
    for (int64_t j = 0; j < p.length; ++j) {
      const int64_t at = l.base + j * l.step;
      const Acc v = load(x[at]);
      if (!p.exclusive) acc = cum_sum_combine(p, acc, v);
      y[at] = store(acc);
      if (p.exclusive) acc = cum_sum_combine(p, acc, v);
    }
  }
}

template <typename T>
void same_type(const CumSumParams& p, const void* x, void* y) {
  lanes<T, T>(p, static_cast<const T*>(x), static_cast<T*>(y), [](T v) { return v; },
              [](T v) { return v; });
}

template <typename T, typename U>
void wrapping(const CumSumParams& p, const void* x, void* y) {
  lanes<T, U>(p, static_cast<const T*>(x), static_cast<T*>(y),
              [](T v) { return static_cast<U>(v); }, [](U v) { return static_cast<T>(v); });
}

}  // namespace

void cum_sum(const CumSumParams& p, const void* x, void* y) {
  switch (p.dtype) {
    case DType::kFloat32: return same_type<float>(p, x, y);
    case DType::kFloat64: return same_type<double>(p, x, y);
    case DType::kInt32: return wrapping<int32_t, uint32_t>(p, x, y);
    case DType::kInt64: return wrapping<int64_t, uint64_t>(p, x, y);
    case DType::kFloat16:
      return lanes<uint16_t, float>(p, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y),
                                    half_to_float, half_from_float);
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kBFloat16: return;  // refused at load (cum_sum_supported)
  }
}

}  // namespace jetplan::kernels::cpu
