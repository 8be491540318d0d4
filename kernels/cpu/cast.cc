#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cast.h"
#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"

namespace jetplan::kernels::cpu {

namespace {

// One element on its way between dtypes. Integers stay integers (an int64 rounded to double on
// the way to float32 would be rounded twice), floats widen to double, which holds every float16
// and float32 exactly.
struct Value {
  bool is_float;
  double f;
  int64_t i;
  bool is_uint64 = false;  // i holds a uint64's bits (values past INT64_MAX wrap negative)
};

template <typename T>
T load_as(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <typename T>
void store_as(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

Value load(DType t, const unsigned char* p) {
  switch (t) {
    case DType::kFloat32:
      return {true, static_cast<double>(load_as<float>(p)), 0};
    case DType::kFloat16:
      return {true, half_to_double(load_as<uint16_t>(p)), 0};
    case DType::kFloat64:
      return {true, load_as<double>(p), 0};
    case DType::kInt8:
      return {false, 0.0, load_as<int8_t>(p)};
    case DType::kUInt8:
      return {false, 0.0, load_as<uint8_t>(p)};
    case DType::kInt32:
      return {false, 0.0, load_as<int32_t>(p)};
    case DType::kInt64:
      return {false, 0.0, load_as<int64_t>(p)};
    case DType::kBool:
      return {false, 0.0, *p != 0 ? 1 : 0};
    case DType::kInt16:
      return {false, 0.0, load_as<int16_t>(p)};
    case DType::kUInt16:
      return {false, 0.0, load_as<uint16_t>(p)};
    case DType::kUInt32:
      return {false, 0.0, load_as<uint32_t>(p)};
    case DType::kUInt64:
      return {false, 0.0, static_cast<int64_t>(load_as<uint64_t>(p)), true};
    case DType::kBFloat16:
      return {true, static_cast<double>(bfloat16_to_float(load_as<uint16_t>(p))), 0};
  }
  return {false, 0.0, 0};  // unreachable for a validated plan
}

// Truncated toward zero, clamped to T's range; NaN gives 0.
template <typename T>
T saturate(double f) {
  if (std::isnan(f)) return 0;
  const double t = std::trunc(f);
  // 2^digits is one past T's max and exactly a double; T's min (0 or -2^digits) is exact too.
  if (t >= std::ldexp(1.0, std::numeric_limits<T>::digits)) return std::numeric_limits<T>::max();
  if (t <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  return static_cast<T>(t);
}

// The low bits of v as T (two's complement wrap). Through the unsigned type and memcpy, since a
// signed conversion out of range is implementation-defined before C++20.
template <typename T>
T wrap(int64_t v) {
  const auto bits = static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v));
  T out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

template <typename T>
void store_integer(unsigned char* p, const Value& v) {
  store_as<T>(p, v.is_float ? saturate<T>(v.f) : wrap<T>(v.i));
}

// An integer Value as a float type (one rounding, to nearest even, from the exact integer).
template <typename F>
F integer_to(const Value& v) {
  return v.is_uint64 ? static_cast<F>(static_cast<uint64_t>(v.i)) : static_cast<F>(v.i);
}

void store(DType t, unsigned char* p, const Value& v) {
  switch (t) {
    case DType::kFloat32:
      return store_as<float>(p, v.is_float ? static_cast<float>(v.f) : integer_to<float>(v));
    case DType::kFloat64:
      return store_as<double>(p, v.is_float ? v.f : integer_to<double>(v));
    case DType::kFloat16:
      // An int64 past 2^53 rounds on its way to double, but anything past 65520 is infinity in
      // half anyway, so the one rounding that matters happens once.
      return store_as<uint16_t>(p, half_from_double(v.is_float ? v.f : integer_to<double>(v)));
    case DType::kInt8:
      return store_integer<int8_t>(p, v);
    case DType::kUInt8:
      return store_integer<uint8_t>(p, v);
    case DType::kInt32:
      return store_integer<int32_t>(p, v);
    case DType::kInt64:
      return store_integer<int64_t>(p, v);
    case DType::kBool:
      *p = (v.is_float ? v.f != 0.0 : v.i != 0) ? 1 : 0;  // NaN != 0, so NaN is true
      return;
    case DType::kInt16:
      return store_integer<int16_t>(p, v);
    case DType::kUInt16:
      return store_integer<uint16_t>(p, v);
    case DType::kUInt32:
      return store_integer<uint32_t>(p, v);
    case DType::kUInt64:
      return store_integer<uint64_t>(p, v);
    case DType::kBFloat16:
      // Through float32 (ONNX's reference casts to float32 first), then truncated: two steps.
      return store_as<uint16_t>(
          p, bfloat16_from_float(v.is_float ? static_cast<float>(v.f) : integer_to<float>(v)));
  }
}

}  // namespace

void cast(const CastParams& p, const void* x, void* y) {
  const int64_t from_bytes = dtype_bytes(p.from), to_bytes = dtype_bytes(p.to);
  if (p.count <= 0) return;
  if (p.from == p.to) {
    // Bits unchanged, NaN payloads included.
    std::memcpy(y, x, static_cast<size_t>(p.count * from_bytes));
    return;
  }
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  for (int64_t i = 0; i < p.count; ++i)
    store(p.to, out + i * to_bytes, load(p.from, in + i * from_bytes));
}

}  // namespace jetplan::kernels::cpu
