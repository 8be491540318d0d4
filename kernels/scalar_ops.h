// The per-element semantics of the scalar ops, written once for both backends: the CPU twins
// (host C++) and the CUDA kernels (nvcc device code) call these, and so do the fused Pointwise
// chains, so a fused plan computes what the unfused one does. Covers ActivationKind (the
// Activation family and every fused epilogue), BinaryOp (Binary), UnaryOp (Unary) and
// ElementwiseOp (Elementwise).
//
// Where the two backends compute an op differently (the GPU uses the fast __expf, fminf/fmaxf,
// erff; the CPU twin expm1, erfc, a NaN-propagating compare, its own ties-to-even rounding),
// both forms stand side by side in JP_DEVICE_OR_HOST(device, host): the preprocessor keeps one,
// so each side compiles exactly the expression it always had. Each backend's float/half storage
// handling stays with its kernels; these functions see float, double or integer values only.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/activation_function.h"
#include "kernels/host_device.h"

#if defined(__CUDA_ARCH__)
#define JP_DEVICE_OR_HOST(device, host) (device)
#else
#define JP_DEVICE_OR_HOST(device, host) (host)
#endif

namespace jetplan::kernels {

// kPRelu: a < 0 ? a * b : a, b the slope.
enum class BinaryOp : uint8_t { kAdd = 0, kSub, kMul, kDiv, kMax, kMin, kPow, kPRelu };
constexpr int kBinaryOpCount = 8;

// Unary math (the Unary family: y[i] = op(x[i]); y has the dtype unary_out_dtype(op, dtype)).
// Activations with a kind in ActivationKind (Relu, Sigmoid, Tanh, Gelu, ...) are not here; the
// Unary GeluTanh is the float16 form of ActivationKind kGeluTanh (the same host bits).
enum class UnaryOp : uint8_t {
  kAbs = 0,
  kNeg,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,  // half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kErf,
  kSign,      // -1, 0 (for either zero) or 1; NaN stays NaN
  kSoftsign,  // x / (1 + |x|); +-1 at +-inf
  kSoftplus,  // log(1 + exp(x))
  kMish,      // x * tanh(softplus(x)); -0 at -inf
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); -0 at -inf
  kIsNaN,     // -> bool
  kIsInf,     // -> bool, either infinity (ONNX IsInf with both detect flags)
  kIsPosInf,  // -> bool, IsInf detect_negative = 0
  kIsNegInf,  // -> bool, IsInf detect_positive = 0
  kNot,       // bool -> bool
};
constexpr int kUnaryOpCount = 31;

// Two-input elementwise ops on any dtype the float BinaryParams does not cover.
enum class ElementwiseOp : uint8_t {
  kAdd = 0,  // integer ops wrap modulo 2^bits, as two's complement hardware does
  kSub,
  kMul,
  kDiv,   // integers truncate toward zero; x / 0 gives 0 (a kernel cannot trap), min / -1 min
  kMod,   // ONNX Mod fmod=0, integers: the result takes the sign of the divisor; x mod 0 gives 0
  kFMod,  // ONNX Mod fmod=1, C fmod: the sign of the dividend; int x fmod 0 is 0, float NaN
  kMax,
  kMin,
  kEqual,  // comparisons give bool; IEEE: NaN compares unequal and unordered to everything
  kLess,
  kLessOrEqual,
  kGreater,
  kGreaterOrEqual,
  kAnd,  // logic: bool in (any nonzero byte is true), bool out
  kOr,
  kXor,
  kPow,  // float64 only: the converter computes integer and mixed-type ONNX Pow here
  kBitAnd,  // integers only: the bits of two's complement (ONNX BitwiseAnd, Or, Xor)
  kBitOr,
  kBitXor,
  // Integers only (ONNX BitShift): the right shift of a signed value is arithmetic; a shift
  // amount that is negative or at least the type's width gives what the fill alone gives: -1
  // for a right shift of a negative value, else 0. A left shift drops the bits past the top.
  kShiftLeft,
  kShiftRight,
};
constexpr int kElementwiseOpCount = 22;

// ------------------------------------------------------------------------------- activations

#if !defined(__CUDA_ARCH__)
namespace scalar_host {
inline float clamp01(float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); }
}  // namespace scalar_host
#endif

// GELU's tanh form (ONNX Gelu approximate="tanh", GPT-2's NewGELUActivation):
// 0.5 x (1 + tanh(z)), z = sqrt(2 / pi) (x + 0.044715 x^3), as x / (1 + exp(-2z)): the same
// value without the cancellation of 1 + tanh(z) for very negative x, where ONNX's float32
// reference keeps few or no correct digits (its formula within 2 ulp elsewhere). The factor
// underflows to 0 far left, where -inf * 0 would be NaN; the limit is -0. FAST (the fused
// activation): the device's __expf and approximate reciprocal, as Sigmoid and Silu use __expf
// (a factor under 2^-126 gives -0 there); otherwise (the Unary op) libdevice's expf and an IEEE
// division. The host computes both alike.
template <bool FAST>
JP_HD_INLINE float gelu_tanh_value(float x) {
  const float z = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  const float e = JP_DEVICE_OR_HOST(FAST ? __expf(-2.f * z) : expf(-2.f * z), std::exp(-2.f * z));
  const float factor =
      JP_DEVICE_OR_HOST(FAST ? __fdividef(1.f, 1.f + e) : 1.f / (1.f + e), 1.f / (1.f + e));
  return factor == 0.f ? -0.f : x * factor;
}

JP_HD_INLINE float activation_value(const Activation& act, float x) {
  switch (act.kind) {
    case ActivationKind::kNone: return x;
    case ActivationKind::kRelu: return JP_DEVICE_OR_HOST(x > 0.f ? x : 0.f, x < 0.f ? 0.f : x);
    case ActivationKind::kClip:
      return JP_DEVICE_OR_HOST(fminf(fmaxf(x, act.alpha), act.beta),
                               x < act.alpha ? act.alpha : (x > act.beta ? act.beta : x));
    case ActivationKind::kLeakyRelu: return x < 0.f ? act.alpha * x : x;
    case ActivationKind::kSigmoid:
      // exp(-x) overflows to inf for very negative x, and 1 / inf is the right limit, 0.
      return JP_DEVICE_OR_HOST(1.f / (1.f + __expf(-x)), 1.f / (1.f + std::exp(-x)));
    case ActivationKind::kTanh: return JP_DEVICE_OR_HOST(tanhf(x), std::tanh(x));
    case ActivationKind::kHardSigmoid:
      return JP_DEVICE_OR_HOST(fmaxf(0.f, fminf(1.f, act.alpha * x + act.beta)),
                               scalar_host::clamp01(act.alpha * x + act.beta));
    case ActivationKind::kHardSwish:
      return JP_DEVICE_OR_HOST(x * fmaxf(0.f, fminf(1.f, x * (1.f / 6.f) + 0.5f)),
                               x * scalar_host::clamp01(x / 6.f + 0.5f));
    case ActivationKind::kSilu:
      return JP_DEVICE_OR_HOST(x / (1.f + __expf(-x)), x / (1.f + std::exp(-x)));
    case ActivationKind::kGelu:
      // Host: 1 + erf(z) == erfc(-z), which does not cancel for very negative x.
      return JP_DEVICE_OR_HOST(0.5f * x * (1.f + erff(x * 0.70710678118654752f)),
                               0.5f * x * std::erfc(-x * 0.70710678118654752f));
    case ActivationKind::kElu:
      // Host: expm1 keeps full relative precision near 0, where exp(x) - 1 cancels.
      return JP_DEVICE_OR_HOST(x < 0.f ? act.alpha * (__expf(x) - 1.f) : x,
                               x < 0.f ? act.alpha * std::expm1(x) : x);
    case ActivationKind::kSelu:
      return JP_DEVICE_OR_HOST(
          x > 0.f ? act.beta * x : act.beta * act.alpha * (__expf(x) - 1.f),
          x > 0.f ? act.beta * x : act.beta * act.alpha * std::expm1(x));
    case ActivationKind::kGeluTanh: return gelu_tanh_value<true>(x);
  }
  return x;  // unreachable for a validated plan; keeps -Wreturn-type quiet without a default
}

// ------------------------------------------------------------------------------ Binary (float)

JP_HD_INLINE float binary_value(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    // NaN propagates from either side (as numpy.maximum/minimum do), so a bad value upstream
    // stays visible instead of being silently replaced.
    case BinaryOp::kMax:
      return JP_DEVICE_OR_HOST((a != a || b != b) ? a + b : fmaxf(a, b),
                               (a > b || a != a) ? a : b);
    case BinaryOp::kMin:
      return JP_DEVICE_OR_HOST((a != a || b != b) ? a + b : fminf(a, b),
                               (a < b || a != a) ? a : b);
    case BinaryOp::kPow: return JP_DEVICE_OR_HOST(powf(a, b), std::pow(a, b));
    case BinaryOp::kPRelu: return a < 0.f ? a * b : a;
  }
  return a;  // unreachable for a validated plan
}

// ------------------------------------------------------------------------------- Unary (float)

#if !defined(__CUDA_ARCH__)
namespace scalar_host {
// Ties to even without consulting the floating-point environment (std::nearbyint would follow
// whatever rounding mode the host program set), as CUDA's rintf does. x - trunc(x) and x / 2 are
// exact, so the tie test is too; std::round keeps the sign, so -0.5 gives -0 as numpy does.
inline float round_half_even(float x) {
  if (std::fabs(x - std::trunc(x)) == 0.5f) return 2.f * std::round(0.5f * x);
  return std::round(x);
}
}  // namespace scalar_host
#endif

// log(1 + exp(x)) overflows for large x; x + log1p(exp(-x)) is the same value and does not.
JP_HD_INLINE float softplus_value(float x) {
  return JP_DEVICE_OR_HOST(x > 0.f ? x + log1pf(expf(-x)) : log1pf(expf(x)),
                           x > 0.f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
}

// The bool-valued UnaryOps on a float (Not is bool -> bool and never reaches here).
JP_HD_INLINE bool unary_predicate_value(UnaryOp op, float x) {
  if (op == UnaryOp::kIsNaN) return JP_DEVICE_OR_HOST(isnan(x), std::isnan(x));
  if (op == UnaryOp::kIsInf) return JP_DEVICE_OR_HOST(isinf(x), std::isinf(x));
  if (op == UnaryOp::kIsPosInf) return JP_DEVICE_OR_HOST(isinf(x), std::isinf(x)) && x > 0.f;
  if (op == UnaryOp::kIsNegInf) return JP_DEVICE_OR_HOST(isinf(x), std::isinf(x)) && x < 0.f;
  return false;
}

// Float math (the GPU: accurate libdevice functions, not the fast intrinsics). Predicates give
// 1 or 0 (their kernels write bool bytes).
JP_HD_INLINE float unary_value(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kAbs: return JP_DEVICE_OR_HOST(fabsf(x), std::fabs(x));
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kExp: return JP_DEVICE_OR_HOST(expf(x), std::exp(x));
    case UnaryOp::kLog: return JP_DEVICE_OR_HOST(logf(x), std::log(x));
    case UnaryOp::kSqrt: return JP_DEVICE_OR_HOST(sqrtf(x), std::sqrt(x));
    case UnaryOp::kReciprocal: return 1.f / x;
    case UnaryOp::kFloor: return JP_DEVICE_OR_HOST(floorf(x), std::floor(x));
    case UnaryOp::kCeil: return JP_DEVICE_OR_HOST(ceilf(x), std::ceil(x));
    case UnaryOp::kRound: return JP_DEVICE_OR_HOST(rintf(x), scalar_host::round_half_even(x));
    case UnaryOp::kSin: return JP_DEVICE_OR_HOST(sinf(x), std::sin(x));
    case UnaryOp::kCos: return JP_DEVICE_OR_HOST(cosf(x), std::cos(x));
    case UnaryOp::kTan: return JP_DEVICE_OR_HOST(tanf(x), std::tan(x));
    case UnaryOp::kAsin: return JP_DEVICE_OR_HOST(asinf(x), std::asin(x));
    case UnaryOp::kAcos: return JP_DEVICE_OR_HOST(acosf(x), std::acos(x));
    case UnaryOp::kAtan: return JP_DEVICE_OR_HOST(atanf(x), std::atan(x));
    case UnaryOp::kSinh: return JP_DEVICE_OR_HOST(sinhf(x), std::sinh(x));
    case UnaryOp::kCosh: return JP_DEVICE_OR_HOST(coshf(x), std::cosh(x));
    case UnaryOp::kAsinh: return JP_DEVICE_OR_HOST(asinhf(x), std::asinh(x));
    case UnaryOp::kAcosh: return JP_DEVICE_OR_HOST(acoshf(x), std::acosh(x));
    case UnaryOp::kAtanh: return JP_DEVICE_OR_HOST(atanhf(x), std::atanh(x));
    case UnaryOp::kErf: return JP_DEVICE_OR_HOST(erff(x), std::erf(x));
    case UnaryOp::kSign: return x > 0.f ? 1.f : (x < 0.f ? -1.f : (x == 0.f ? 0.f : x));
    case UnaryOp::kSoftsign:
      // inf / inf would be NaN; the limits are +-1.
      return JP_DEVICE_OR_HOST(isinf(x) ? copysignf(1.f, x) : x / (1.f + fabsf(x)),
                               std::isinf(x) ? std::copysign(1.f, x) : x / (1.f + std::fabs(x)));
    case UnaryOp::kSoftplus: return softplus_value(x);
    case UnaryOp::kMish: {
      // tanh(softplus(x)) underflows to 0 far left, where -inf * 0 would be NaN; the limit is -0.
      const float t = JP_DEVICE_OR_HOST(tanhf(softplus_value(x)), std::tanh(softplus_value(x)));
      return t == 0.f ? JP_DEVICE_OR_HOST(copysignf(0.f, x), std::copysign(0.f, x)) : x * t;
    }
    case UnaryOp::kGeluTanh: return gelu_tanh_value<false>(x);
    case UnaryOp::kIsNaN:
    case UnaryOp::kIsInf:
    case UnaryOp::kIsPosInf:
    case UnaryOp::kIsNegInf:
    case UnaryOp::kNot:
      return unary_predicate_value(op, x) ? 1.f : 0.f;
  }
  return x;  // unreachable for a validated plan
}

// Integer Abs, Neg and Sign with two's complement results for every input, the most negative
// value included: the arithmetic runs on the unsigned type, where overflow is defined.
template <typename T>
JP_HD_INLINE T unary_integer_value(UnaryOp op, T x) {
  using U = std::make_unsigned_t<T>;
  const T negated = static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
  T r = x;
  if (op == UnaryOp::kAbs) r = x < 0 ? negated : x;
  else if (op == UnaryOp::kNeg) r = negated;
  else if (op == UnaryOp::kSign) r = static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
  return r;
}

// ------------------------------------------------------------------------------- Elementwise

// -1 for a signed T; 0 for an unsigned one, which has no -1 (every test against it follows a
// test against 0, so it never matches). A constant, so the test compiles to a plain compare.
template <typename T>
constexpr T kMinusOne = std::is_signed_v<T> ? T(-1) : T(0);

// Integer arithmetic defined for every input pair: overflow wraps (computed on the unsigned
// type, at least as wide as unsigned int so that 16-bit products cannot overflow a promoted
// int), division by 0 gives 0, and min / -1 (which overflows) wraps to min like the product.
template <typename T>
JP_HD_INLINE T elementwise_integer_value(ElementwiseOp op, T a, T b) {
  using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
  const U ua = static_cast<U>(static_cast<std::make_unsigned_t<T>>(a));
  const U ub = static_cast<U>(static_cast<std::make_unsigned_t<T>>(b));
  switch (op) {
    case ElementwiseOp::kAdd: return static_cast<T>(static_cast<U>(ua + ub));
    case ElementwiseOp::kSub: return static_cast<T>(static_cast<U>(ua - ub));
    case ElementwiseOp::kMul: return static_cast<T>(static_cast<U>(ua * ub));
    case ElementwiseOp::kDiv:
      if (b == 0) return 0;
      if (b == kMinusOne<T>) return static_cast<T>(static_cast<U>(U{0} - ua));
      return static_cast<T>(a / b);  // C++ truncates toward zero
    case ElementwiseOp::kMod: {
      // Every integer is a multiple of -1, and a % -1 may trap.
      if (b == 0 || b == kMinusOne<T>) return 0;
      const T r = static_cast<T>(a % b);  // sign of a
      if constexpr (std::is_signed_v<T>) {
        return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;  // sign of b
      } else {
        return r;
      }
    }
    case ElementwiseOp::kFMod:
      if (b == 0 || b == kMinusOne<T>) return 0;
      return static_cast<T>(a % b);
    case ElementwiseOp::kMax: return a > b ? a : b;
    case ElementwiseOp::kMin: return a < b ? a : b;
    case ElementwiseOp::kBitAnd: return static_cast<T>(ua & ub);
    case ElementwiseOp::kBitOr: return static_cast<T>(ua | ub);
    case ElementwiseOp::kBitXor: return static_cast<T>(ua ^ ub);
    case ElementwiseOp::kShiftLeft:
    case ElementwiseOp::kShiftRight: {
      bool negative = false, below = false;  // a < 0, b < 0: never for an unsigned T
      if constexpr (std::is_signed_v<T>) negative = a < T(0), below = b < T(0);
      if (below || ub >= U(sizeof(T) * 8))
        return op == ElementwiseOp::kShiftRight && negative ? T(kMinusOne<T>) : T(0);
      const unsigned n = static_cast<unsigned>(ub);
      if (op == ElementwiseOp::kShiftLeft) return static_cast<T>(static_cast<U>(ua << n));
      // Arithmetic for a negative value: its complement (not negative) shifted, complemented back.
      if (negative) return static_cast<T>(~(~static_cast<int64_t>(a) >> n));
      return static_cast<T>(ua >> n);
    }
    case ElementwiseOp::kPow:  // float64 only (elementwise_supported)
    case ElementwiseOp::kEqual:
    case ElementwiseOp::kLess:
    case ElementwiseOp::kLessOrEqual:
    case ElementwiseOp::kGreater:
    case ElementwiseOp::kGreaterOrEqual:
    case ElementwiseOp::kAnd:
    case ElementwiseOp::kOr:
    case ElementwiseOp::kXor:
      break;  // give bool; the kernels route them to elementwise_compare_value
  }
  return a;
}

// Comparisons (IEEE: NaN compares unequal and unordered to everything) and logic (nonzero is
// true) of two values of any type; a half is compared as the float it exactly is.
template <typename T>
JP_HD_INLINE bool elementwise_compare_value(ElementwiseOp op, T a, T b) {
  switch (op) {
    case ElementwiseOp::kEqual: return a == b;
    case ElementwiseOp::kLess: return a < b;
    case ElementwiseOp::kLessOrEqual: return a <= b;
    case ElementwiseOp::kGreater: return a > b;
    case ElementwiseOp::kGreaterOrEqual: return a >= b;
    case ElementwiseOp::kAnd: return a != T(0) && b != T(0);
    case ElementwiseOp::kOr: return a != T(0) || b != T(0);
    case ElementwiseOp::kXor: return (a != T(0)) != (b != T(0));
    case ElementwiseOp::kAdd:
    case ElementwiseOp::kSub:
    case ElementwiseOp::kMul:
    case ElementwiseOp::kDiv:
    case ElementwiseOp::kMod:
    case ElementwiseOp::kFMod:
    case ElementwiseOp::kMax:
    case ElementwiseOp::kMin:
    case ElementwiseOp::kPow:
    case ElementwiseOp::kBitAnd:
    case ElementwiseOp::kBitOr:
    case ElementwiseOp::kBitXor:
    case ElementwiseOp::kShiftLeft:
    case ElementwiseOp::kShiftRight:
      break;  // arithmetic; the kernels route it elsewhere
  }
  return false;
}

// C fmod: the sign of the dividend (ONNX Mod fmod=1 on floats).
JP_HD_INLINE float fmod_value(float a, float b) {
  return JP_DEVICE_OR_HOST(fmodf(a, b), std::fmod(a, b));
}
JP_HD_INLINE double fmod_value(double a, double b) {
  return JP_DEVICE_OR_HOST(fmod(a, b), std::fmod(a, b));
}

// Float64 arithmetic with the float BinaryOps' semantics (binary_value on the host): IEEE
// division, NaN from either side of Max and Min. Both backends; Pow is CUDA's pow on the GPU
// (within 2 ulp of std::pow), the rest is exact IEEE arithmetic on both.
JP_HD_INLINE double elementwise_float64_value(ElementwiseOp op, double a, double b) {
  switch (op) {
    case ElementwiseOp::kAdd: return a + b;
    case ElementwiseOp::kSub: return a - b;
    case ElementwiseOp::kMul: return a * b;
    case ElementwiseOp::kDiv: return a / b;
    case ElementwiseOp::kFMod: return fmod_value(a, b);
    case ElementwiseOp::kMax: return (a > b || a != a) ? a : b;
    case ElementwiseOp::kMin: return (a < b || a != a) ? a : b;
    case ElementwiseOp::kPow: return JP_DEVICE_OR_HOST(pow(a, b), std::pow(a, b));
    case ElementwiseOp::kMod:  // integers only (elementwise_supported)
    case ElementwiseOp::kEqual:
    case ElementwiseOp::kLess:
    case ElementwiseOp::kLessOrEqual:
    case ElementwiseOp::kGreater:
    case ElementwiseOp::kGreaterOrEqual:
    case ElementwiseOp::kAnd:
    case ElementwiseOp::kOr:
    case ElementwiseOp::kXor:
    case ElementwiseOp::kBitAnd:  // integers only (elementwise_supported)
    case ElementwiseOp::kBitOr:
    case ElementwiseOp::kBitXor:
    case ElementwiseOp::kShiftLeft:
    case ElementwiseOp::kShiftRight:
      break;
  }
  return a;
}

}  // namespace jetplan::kernels
