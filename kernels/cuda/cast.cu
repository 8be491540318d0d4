// Cast on the GPU between Float32 and Float16 (the casts a GPU plan puts at its float32 inputs
// and outputs), from integers and Bool to either float (attention masks, index arithmetic
// feeding float math), and from floats, integers and Bool to Int64, Int32, Int8 and UInt8. Twin: kernels/cpu/cast.cc. Float to half rounds to nearest even and
// overflows to infinity, as the twin does; a NaN stays a NaN (its payload is the hardware's, not
// the twin's). An integer rounds once, as the twin does: to float32 directly, to half through
// double (exact for every int32; an int64 past 2^53 is infinity in half anyway); Bool is 0 or 1.
// Floats and integers to Bool: nonzero is true.
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/cast.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

// Four elements per thread where both pointers allow 4-element vectors (In4 holds four In, Out4
// four Out, each aligned to its size); the tail (and any misaligned pair of pointers) one at a
// time. four converts a vector, one a single element.
template <typename In4, typename Out4, typename In, typename Out, typename Four, typename One>
__device__ void cast_by_fours(const In* x, Out* y, int64_t count, Four four, One one) {
  const bool vec = (reinterpret_cast<uintptr_t>(x) % sizeof(In4) == 0) &&
                   (reinterpret_cast<uintptr_t>(y) % sizeof(Out4) == 0);
  int64_t done = 0;
  if (vec) {
    const int64_t groups = count / 4;
    for (int64_t g = global_thread(); g < groups; g += global_threads())
      reinterpret_cast<Out4*>(y)[g] = four(reinterpret_cast<const In4*>(x)[g]);
    done = groups * 4;
  }
  for (int64_t i = done + global_thread(); i < count; i += global_threads()) y[i] = one(x[i]);
}

__device__ void cast_f32_f16(const float* x, __half* y, int64_t count) {
  cast_by_fours<float4, uint2>(
      x, y, count,
      [](float4 v) {
        const __half2 lo = __floats2half2_rn(v.x, v.y);
        const __half2 hi = __floats2half2_rn(v.z, v.w);
        uint2 out;
        out.x = *reinterpret_cast<const uint32_t*>(&lo);
        out.y = *reinterpret_cast<const uint32_t*>(&hi);
        return out;
      },
      [](float v) { return __float2half_rn(v); });
}

__device__ void cast_f16_f32(const __half* x, float* y, int64_t count) {
  cast_by_fours<uint2, float4>(
      x, y, count,
      [](uint2 in) {
        const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&in.x));
        const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&in.y));
        return make_float4(lo.x, lo.y, hi.x, hi.y);
      },
      [](__half v) { return __half2float(v); });
}

__device__ __forceinline__ void to_float(int64_t v, float* y) { *y = __ll2float_rn(v); }
__device__ __forceinline__ void to_float(int32_t v, float* y) { *y = __int2float_rn(v); }
__device__ __forceinline__ void to_float(int8_t v, float* y) { *y = float(v); }
__device__ __forceinline__ void to_float(uint8_t v, float* y) { *y = float(v); }
template <typename T>
__device__ __forceinline__ void to_float(T v, __half* y) {
  *y = __double2half(static_cast<double>(v));
}

template <typename From, typename To>
__device__ void cast_int(const From* x, To* y, int64_t count, bool boolean) {
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const From v = x[i];
    to_float(boolean ? From(v != 0) : v, y + i);
  }
}

// ---------------------------------------------------------------------------- to an integer

// The storage of a DType (the row shorthands of kernels/cast.h).
constexpr DType kF16 = DType::kFloat16, kF32 = DType::kFloat32, kI64 = DType::kInt64,
                kI32 = DType::kInt32, kI8 = DType::kInt8, kU8 = DType::kUInt8,
                kBool = DType::kBool;
template <DType D> struct Storage;
template <> struct Storage<DType::kFloat16> { using T = __half; };
template <> struct Storage<DType::kFloat32> { using T = float; };
template <> struct Storage<DType::kInt64> { using T = int64_t; static constexpr int digits = 63; };
template <> struct Storage<DType::kInt32> { using T = int32_t; static constexpr int digits = 31; };
template <> struct Storage<DType::kInt8> { using T = int8_t; static constexpr int digits = 7; };
template <> struct Storage<DType::kUInt8> { using T = uint8_t; static constexpr int digits = 8; };
template <> struct Storage<DType::kBool> { using T = uint8_t; };

// As the twin: truncated toward zero and clamped to To's range ([-2^digits, 2^digits) for the
// signed, [0, 2^digits) for UInt8, both bounds exact doubles); NaN gives 0.
template <DType To>
__device__ __forceinline__ typename Storage<To>::T saturate(double f) {
  using T = typename Storage<To>::T;
  constexpr bool is_signed = To != DType::kUInt8;
  constexpr double top = double(uint64_t{1} << Storage<To>::digits);
  constexpr double bottom = is_signed ? -top : 0.0;
  if (isnan(f)) return 0;
  const double t = trunc(f);
  if (t >= top) return T(is_signed ? (uint64_t{1} << Storage<To>::digits) - 1 : 0xff);
  if (t <= bottom) return T(is_signed ? int64_t(bottom) : 0);
  return T(t);
}

template <DType From, DType To>
__device__ __forceinline__ typename Storage<To>::T to_integer(typename Storage<From>::T v) {
  using T = typename Storage<To>::T;
  if constexpr (From == DType::kFloat16) {
    return saturate<To>(double(__half2float(v)));
  } else if constexpr (From == DType::kFloat32) {
    return saturate<To>(double(v));
  } else if constexpr (From == DType::kBool) {
    return T(v != 0 ? 1 : 0);
  } else {  // the low bits, two's complement, as the twin's wrap
    return T(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(int64_t(v))));
  }
}

template <DType From, DType To>
__device__ void cast_to_integer(const StepPointers& ptrs, const CastParams& p) {
  const auto* x = static_cast<const typename Storage<From>::T*>(ptrs.in[0]);
  auto* y = static_cast<typename Storage<To>::T*>(ptrs.out[0]);
  for (int64_t i = global_thread(); i < p.count; i += global_threads())
    y[i] = to_integer<From, To>(x[i]);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::CastParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void jp_cast_f32_f16(StepPointers ptrs, const CastParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::cast_f32_f16(static_cast<const float*>(ptrs.in[0]),
                                       static_cast<__half*>(ptrs.out[0]), p.count);
}
extern "C" __global__ void jp_cast_f16_f32(StepPointers ptrs, const CastParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::cast_f16_f32(static_cast<const __half*>(ptrs.in[0]),
                                       static_cast<float*>(ptrs.out[0]), p.count);
}

// Integers and Bool to float: jp_cast_<from>_<to>.
#define JP_CAST_INT(name, From, To, boolean)                                               \
  extern "C" __global__ void name(StepPointers ptrs, const CastParams p) {                 \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    jetplan::kernels::cuda::cast_int(static_cast<const From*>(ptrs.in[0]),                 \
                                     static_cast<To*>(ptrs.out[0]), p.count, boolean);     \
  }
JP_CAST_INT(jp_cast_i64_f16, int64_t, __half, false)
JP_CAST_INT(jp_cast_i64_f32, int64_t, float, false)
JP_CAST_INT(jp_cast_i32_f16, int32_t, __half, false)
JP_CAST_INT(jp_cast_i32_f32, int32_t, float, false)
JP_CAST_INT(jp_cast_i8_f16, int8_t, __half, false)
JP_CAST_INT(jp_cast_i8_f32, int8_t, float, false)
JP_CAST_INT(jp_cast_u8_f16, uint8_t, __half, false)
JP_CAST_INT(jp_cast_u8_f32, uint8_t, float, false)
JP_CAST_INT(jp_cast_b8_f16, uint8_t, __half, true)
JP_CAST_INT(jp_cast_b8_f32, uint8_t, float, true)
#undef JP_CAST_INT

// Integers to Bool: nonzero is 1 (BERT's int64 attention mask, cast to bool).
#define JP_CAST_BOOL(name, From)                                                        \
  extern "C" __global__ void name(StepPointers ptrs, const CastParams p) {              \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    const auto* x = static_cast<const From*>(ptrs.in[0]);                               \
    auto* y = static_cast<uint8_t*>(ptrs.out[0]);                                       \
    for (int64_t i = jetplan::kernels::cuda::global_thread(); i < p.count;              \
         i += jetplan::kernels::cuda::global_threads())                                 \
      y[i] = x[i] != 0 ? 1 : 0;                                                         \
  }
JP_CAST_BOOL(jp_cast_i64_b8, int64_t)
JP_CAST_BOOL(jp_cast_i32_b8, int32_t)
JP_CAST_BOOL(jp_cast_i8_b8, int8_t)
JP_CAST_BOOL(jp_cast_u8_b8, uint8_t)
#undef JP_CAST_BOOL

// Floats to Bool: nonzero (NaN included) is 1, as the twin does (masked_fill's mask in BERT).
extern "C" __global__ void jp_cast_f16_b8(StepPointers ptrs, const CastParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  const auto* x = static_cast<const __half*>(ptrs.in[0]);
  auto* y = static_cast<uint8_t*>(ptrs.out[0]);
  for (int64_t i = jetplan::kernels::cuda::global_thread(); i < p.count;
       i += jetplan::kernels::cuda::global_threads())
    y[i] = __half2float(x[i]) != 0.f ? 1 : 0;
}
extern "C" __global__ void jp_cast_f32_b8(StepPointers ptrs, const CastParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  const auto* x = static_cast<const float*>(ptrs.in[0]);
  auto* y = static_cast<uint8_t*>(ptrs.out[0]);
  for (int64_t i = jetplan::kernels::cuda::global_thread(); i < p.count;
       i += jetplan::kernels::cuda::global_threads())
    y[i] = x[i] != 0.f ? 1 : 0;
}

// Every row of JP_CUDA_CASTS_TO_INTEGER (kernels/cast.h).
#define JP_CAST_TO_INTEGER_KERNEL(F, symbol, from, threads, to)                        \
  extern "C" __global__ void symbol(StepPointers ptrs, const CastParams p) {           \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    namespace jk = jetplan::kernels::cuda;                                             \
    jk::cast_to_integer<jk::from, jk::to>(ptrs, p);                                    \
  }
JP_CUDA_CASTS_TO_INTEGER(JP_CAST_TO_INTEGER_KERNEL, Cast)
#undef JP_CAST_TO_INTEGER_KERNEL

// ------------------------------------------------------------------------- any pair (jp_cast_any)
// The casts the typed kernels above leave out (Float64, BFloat16, Int16, UInt16, UInt32, UInt64
// at either end), one element per thread through the twin's own path: an element loads as an
// exact integer or an exact double, then stores with the twin's rules (saturating truncation from
// a float, the low bits from an integer, one rounding to a float). The dtypes are the step's
// (uniform over the grid), so each thread takes the same branch.
namespace jetplan::kernels::cuda {
namespace {

struct AnyValue {
  bool is_float;
  double f;
  int64_t i;
  bool is_uint64;  // i holds a uint64's bits
};

__device__ __forceinline__ float bfloat16_bits_to_float(uint16_t b) {
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
}

// To nearest even, NaN kept NaN (quiet, sign and top payload bits): the twin's
// bfloat16_from_float (kernels/cpu/bfloat16.h), on the bits.
__device__ __forceinline__ uint16_t bfloat16_bits_from_float(float f) {
  const uint32_t bits = __float_as_uint(f);
  const auto upper = static_cast<uint16_t>(bits >> 16);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return upper | 0x0040u;
  return static_cast<uint16_t>((bits + 0x7fffu + (upper & 1u)) >> 16);
}

__device__ __forceinline__ AnyValue load_any(DType t, const unsigned char* x, int64_t i) {
  switch (t) {
    case DType::kFloat32: return {true, double(reinterpret_cast<const float*>(x)[i]), 0, false};
    case DType::kFloat16:
      return {true, double(__half2float(reinterpret_cast<const __half*>(x)[i])), 0, false};
    case DType::kFloat64: return {true, reinterpret_cast<const double*>(x)[i], 0, false};
    case DType::kBFloat16:
      return {true, double(bfloat16_bits_to_float(reinterpret_cast<const uint16_t*>(x)[i])), 0,
              false};
    case DType::kInt8: return {false, 0.0, reinterpret_cast<const int8_t*>(x)[i], false};
    case DType::kUInt8: return {false, 0.0, reinterpret_cast<const uint8_t*>(x)[i], false};
    case DType::kInt16: return {false, 0.0, reinterpret_cast<const int16_t*>(x)[i], false};
    case DType::kUInt16: return {false, 0.0, reinterpret_cast<const uint16_t*>(x)[i], false};
    case DType::kInt32: return {false, 0.0, reinterpret_cast<const int32_t*>(x)[i], false};
    case DType::kUInt32: return {false, 0.0, reinterpret_cast<const uint32_t*>(x)[i], false};
    case DType::kInt64: return {false, 0.0, reinterpret_cast<const int64_t*>(x)[i], false};
    case DType::kUInt64:
      return {false, 0.0, static_cast<int64_t>(reinterpret_cast<const uint64_t*>(x)[i]), true};
    case DType::kBool: return {false, 0.0, x[i] != 0 ? 1 : 0, false};
  }
  return {false, 0.0, 0, false};
}

// Truncated toward zero, clamped to the integer type's range (`top`, 2^Digits, is one past its
// max and -top its min when signed: both exact doubles); NaN gives 0. The twin's saturate.
template <typename T, int Digits, bool Signed>
__device__ __forceinline__ T saturate_any(double f) {
  if (isnan(f)) return 0;
  const double t = trunc(f);
  const double top = ldexp(1.0, Digits);
  using U = std::make_unsigned_t<T>;
  const U all = static_cast<U>(~U(0));
  if (t >= top) return static_cast<T>(Signed ? U(all >> 1) : all);  // the type's max
  if (t <= (Signed ? -top : 0.0)) return Signed ? static_cast<T>(static_cast<int64_t>(-top)) : T(0);
  return static_cast<T>(t);
}

template <typename T, int Digits, bool Signed>
__device__ __forceinline__ T to_integer_any(const AnyValue& v) {
  if (v.is_float) return saturate_any<T, Digits, Signed>(v.f);
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v.i)));
}

template <typename F>
__device__ __forceinline__ F integer_to_any(const AnyValue& v) {
  return v.is_uint64 ? static_cast<F>(static_cast<uint64_t>(v.i)) : static_cast<F>(v.i);
}

__device__ __forceinline__ void store_any(DType t, unsigned char* y, int64_t i,
                                          const AnyValue& v) {
  switch (t) {
    case DType::kFloat32:
      reinterpret_cast<float*>(y)[i] =
          v.is_float ? static_cast<float>(v.f) : integer_to_any<float>(v);
      return;
    case DType::kFloat64:
      reinterpret_cast<double*>(y)[i] = v.is_float ? v.f : integer_to_any<double>(v);
      return;
    case DType::kFloat16:
      reinterpret_cast<__half*>(y)[i] =
          __double2half(v.is_float ? v.f : integer_to_any<double>(v));
      return;
    case DType::kBFloat16:
      reinterpret_cast<uint16_t*>(y)[i] = bfloat16_bits_from_float(
          v.is_float ? static_cast<float>(v.f) : integer_to_any<float>(v));
      return;
    case DType::kInt8: reinterpret_cast<int8_t*>(y)[i] = to_integer_any<int8_t, 7, true>(v); return;
    case DType::kUInt8:
      reinterpret_cast<uint8_t*>(y)[i] = to_integer_any<uint8_t, 8, false>(v);
      return;
    case DType::kInt16:
      reinterpret_cast<int16_t*>(y)[i] = to_integer_any<int16_t, 15, true>(v);
      return;
    case DType::kUInt16:
      reinterpret_cast<uint16_t*>(y)[i] = to_integer_any<uint16_t, 16, false>(v);
      return;
    case DType::kInt32:
      reinterpret_cast<int32_t*>(y)[i] = to_integer_any<int32_t, 31, true>(v);
      return;
    case DType::kUInt32:
      reinterpret_cast<uint32_t*>(y)[i] = to_integer_any<uint32_t, 32, false>(v);
      return;
    case DType::kInt64:
      reinterpret_cast<int64_t*>(y)[i] = to_integer_any<int64_t, 63, true>(v);
      return;
    case DType::kUInt64:
      reinterpret_cast<uint64_t*>(y)[i] = to_integer_any<uint64_t, 64, false>(v);
      return;
    case DType::kBool:
      y[i] = (v.is_float ? v.f != 0.0 : v.i != 0) ? 1 : 0;  // NaN is true
      return;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

extern "C" __global__ void jp_cast_any(StepPointers ptrs, const CastParams p) {
  namespace jk = jetplan::kernels::cuda;
  jk::pdl_wait(); jk::pdl_trigger();
  const auto* x = static_cast<const unsigned char*>(ptrs.in[0]);
  auto* y = static_cast<unsigned char*>(ptrs.out[0]);
  for (int64_t i = jk::global_thread(); i < p.count; i += jk::global_threads())
    jk::store_any(p.to, y, i, jk::load_any(p.from, x, i));
}
