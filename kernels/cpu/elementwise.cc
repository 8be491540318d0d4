#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/half.h"
#include "kernels/cpu/tensor_ops.h"

namespace jetplan::kernels::cpu {

namespace {

// b == -1 for signed T only (an unsigned b never is; comparing would convert -1 to its max).
template <typename T>
constexpr bool is_minus_one(T b) {
  if constexpr (std::is_signed_v<T>) {
    return b == T(-1);
  } else {
    return false;
  }
}

// Integer arithmetic defined for every input pair: overflow wraps (computed on the unsigned
// type, at least as wide as unsigned int so that 16-bit products cannot overflow a promoted
// int), division by 0 gives 0, and min / -1 (which overflows) wraps to min like the product.
template <typename T>
T integer_arith(ElementwiseOp op, T a, T b) {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  const U ua = static_cast<U>(static_cast<std::make_unsigned_t<T>>(a));
  const U ub = static_cast<U>(static_cast<std::make_unsigned_t<T>>(b));
  switch (op) {
    case ElementwiseOp::kAdd:
      return static_cast<T>(static_cast<U>(ua + ub));
    case ElementwiseOp::kSub:
      return static_cast<T>(static_cast<U>(ua - ub));
    case ElementwiseOp::kMul:
      return static_cast<T>(static_cast<U>(ua * ub));
    case ElementwiseOp::kDiv:
      if (b == 0) return 0;
      if (is_minus_one(b)) return static_cast<T>(static_cast<U>(U{0} - ua));
      return static_cast<T>(a / b);  // C++ truncates toward zero
    case ElementwiseOp::kMod: {
      if (b == 0 || is_minus_one(b)) return 0;  // every integer is a multiple of -1; a % -1 may trap
      const T r = static_cast<T>(a % b);         // sign of a
      if constexpr (std::is_signed_v<T>) {
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;  // sign of b
      } else {
        return r;
      }
    }
    case ElementwiseOp::kFMod:
      if (b == 0 || is_minus_one(b)) return 0;
      return static_cast<T>(a % b);
    case ElementwiseOp::kMax:
      return a > b ? a : b;
    case ElementwiseOp::kMin:
      return a < b ? a : b;
    case ElementwiseOp::kPow:  // float64 only (elementwise_supported)
    case ElementwiseOp::kEqual:
    case ElementwiseOp::kLess:
    case ElementwiseOp::kLessOrEqual:
    case ElementwiseOp::kGreater:
    case ElementwiseOp::kGreaterOrEqual:
    case ElementwiseOp::kAnd:
    case ElementwiseOp::kOr:
    case ElementwiseOp::kXor:
      break;  // give bool; elementwise() routes them elsewhere
  }
  return a;
}

template <typename T>
bool compare(ElementwiseOp op, T a, T b) {
  switch (op) {
    case ElementwiseOp::kEqual:
      return a == b;
    case ElementwiseOp::kLess:
      return a < b;
    case ElementwiseOp::kLessOrEqual:
      return a <= b;
    case ElementwiseOp::kGreater:
      return a > b;
    case ElementwiseOp::kGreaterOrEqual:
      return a >= b;
    case ElementwiseOp::kAnd:
      return a != 0 && b != 0;
    case ElementwiseOp::kOr:
      return a != 0 || b != 0;
    case ElementwiseOp::kXor:
      return (a != 0) != (b != 0);
    case ElementwiseOp::kAdd:
    case ElementwiseOp::kSub:
    case ElementwiseOp::kMul:
    case ElementwiseOp::kDiv:
    case ElementwiseOp::kMod:
    case ElementwiseOp::kFMod:
    case ElementwiseOp::kMax:
    case ElementwiseOp::kMin:
    case ElementwiseOp::kPow:
      break;  // arithmetic; elementwise() routes it elsewhere
  }
  return false;
}

// out[i] = f(a[i . a_strides], b[i . b_strides]) over the dense out_dims.
template <typename In, typename Out, typename F>
void broadcast_loop(const ElementwiseParams& p, const void* a, const void* b, void* y, F f) {
  const In* as = static_cast<const In*>(a);
  const In* bs = static_cast<const In*>(b);
  Out* out = static_cast<Out*>(y);
  int64_t count = 1;
  for (int d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, a_off = 0, b_off = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      a_off += coord * p.a_strides[d];
      b_off += coord * p.b_strides[d];
    }
    out[i] = f(as[a_off], bs[b_off]);
  }
}

template <typename T>
void compare_loop(const ElementwiseParams& p, const void* a, const void* b, void* y) {
  const ElementwiseOp op = p.op;
  broadcast_loop<T, unsigned char>(
      p, a, b, y, [op](T u, T v) -> unsigned char { return compare<T>(op, u, v) ? 1 : 0; });
}

template <typename T>
void integer_loop(const ElementwiseParams& p, const void* a, const void* b, void* y) {
  const ElementwiseOp op = p.op;
  broadcast_loop<T, T>(p, a, b, y, [op](T u, T v) { return integer_arith<T>(op, u, v); });
}

// Float64 arithmetic with the float BinaryOps' semantics (binary.cc): IEEE division, NaN from
// either side of Max and Min.
double float_arith(ElementwiseOp op, double a, double b) {
  switch (op) {
    case ElementwiseOp::kAdd:
      return a + b;
    case ElementwiseOp::kSub:
      return a - b;
    case ElementwiseOp::kMul:
      return a * b;
    case ElementwiseOp::kDiv:
      return a / b;
    case ElementwiseOp::kFMod:
      return std::fmod(a, b);
    case ElementwiseOp::kMax:
      return (a > b || a != a) ? a : b;
    case ElementwiseOp::kMin:
      return (a < b || a != a) ? a : b;
    case ElementwiseOp::kPow:
      return std::pow(a, b);
    case ElementwiseOp::kMod:  // integers only (elementwise_supported)
    case ElementwiseOp::kEqual:
    case ElementwiseOp::kLess:
    case ElementwiseOp::kLessOrEqual:
    case ElementwiseOp::kGreater:
    case ElementwiseOp::kGreaterOrEqual:
    case ElementwiseOp::kAnd:
    case ElementwiseOp::kOr:
    case ElementwiseOp::kXor:
      break;
  }
  return a;
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
              return compare<float>(op, half_to_float(u), half_to_float(v)) ? 1 : 0;
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
        p, a, b, y, [op](double u, double v) { return float_arith(op, u, v); });
  }
  // Only float32 kFMod remains (elementwise_supported).
  broadcast_loop<float, float>(p, a, b, y, [](float u, float v) { return std::fmod(u, v); });
}

}  // namespace jetplan::kernels::cpu
