#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/cpu/tensor_ops.h"

namespace jetplan::kernels::cpu {

namespace {

// Ties to even without consulting the floating-point environment (std::nearbyint would follow
// whatever rounding mode the host program set), as CUDA's rintf does. x - trunc(x) and x / 2 are
// exact, so the tie test is too; std::round keeps the sign, so -0.5 gives -0 as numpy does.
float round_half_even(float x) {
  if (std::fabs(x - std::trunc(x)) == 0.5f) return 2.f * std::round(0.5f * x);
  return std::round(x);
}

float softplus(float x) {
  // log(1 + exp(x)) overflows for large x; x + log1p(exp(-x)) is the same value and does not.
  return x > 0.f ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Switches over UnaryOp list every op; these two helpers see only the ops named in them.
bool predicate(UnaryOp op, float x) {
  if (op == UnaryOp::kIsNaN) return std::isnan(x);
  if (op == UnaryOp::kIsInf) return std::isinf(x);
  if (op == UnaryOp::kIsPosInf) return std::isinf(x) && x > 0.f;
  if (op == UnaryOp::kIsNegInf) return std::isinf(x) && x < 0.f;
  return false;
}

// Two's complement results for every input, the most negative value included: the arithmetic
// runs on the unsigned type, where overflow is defined, and converts back.
template <typename T>
T unary_integer(UnaryOp op, T x) {
  using U = std::make_unsigned_t<T>;
  const T negated = static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
  if (op == UnaryOp::kAbs) return x < 0 ? negated : x;
  if (op == UnaryOp::kNeg) return negated;
  if (op == UnaryOp::kSign) return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
  return x;
}

template <typename T>
void unary_integer_loop(const UnaryParams& p, const void* x, void* y) {
  const T* in = static_cast<const T*>(x);
  T* out = static_cast<T*>(y);
  for (int64_t i = 0; i < p.count; ++i) out[i] = unary_integer<T>(p.op, in[i]);
}

}  // namespace

float apply_unary(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kAbs:
      return std::fabs(x);
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kExp:
      return std::exp(x);
    case UnaryOp::kLog:
      return std::log(x);
    case UnaryOp::kSqrt:
      return std::sqrt(x);
    case UnaryOp::kReciprocal:
      return 1.f / x;
    case UnaryOp::kFloor:
      return std::floor(x);
    case UnaryOp::kCeil:
      return std::ceil(x);
    case UnaryOp::kRound:
      return round_half_even(x);
    case UnaryOp::kSin:
      return std::sin(x);
    case UnaryOp::kCos:
      return std::cos(x);
    case UnaryOp::kTan:
      return std::tan(x);
    case UnaryOp::kAsin:
      return std::asin(x);
    case UnaryOp::kAcos:
      return std::acos(x);
    case UnaryOp::kAtan:
      return std::atan(x);
    case UnaryOp::kSinh:
      return std::sinh(x);
    case UnaryOp::kCosh:
      return std::cosh(x);
    case UnaryOp::kAsinh:
      return std::asinh(x);
    case UnaryOp::kAcosh:
      return std::acosh(x);
    case UnaryOp::kAtanh:
      return std::atanh(x);
    case UnaryOp::kErf:
      return std::erf(x);
    case UnaryOp::kSign:
      return x > 0.f ? 1.f : (x < 0.f ? -1.f : (x == 0.f ? 0.f : x));
    case UnaryOp::kSoftsign:
      // inf / inf would be NaN; the limits are +-1.
      return std::isinf(x) ? std::copysign(1.f, x) : x / (1.f + std::fabs(x));
    case UnaryOp::kSoftplus:
      return softplus(x);
    case UnaryOp::kMish: {
      // tanh(softplus(x)) underflows to 0 far left, where -inf * 0 would be NaN; the limit is -0.
      const float t = std::tanh(softplus(x));
      return t == 0.f ? std::copysign(0.f, x) : x * t;
    }
    case UnaryOp::kGeluTanh: {
      // 0.5 (1 + tanh(z)) == 1 / (1 + exp(-2z)): the same value without the cancellation of
      // 1 + tanh(z) for very negative x.
      // The factor underflows to 0 far left, where -inf * 0 would be NaN; the limit is -0.
      const float z = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      const float factor = 1.f / (1.f + std::exp(-2.f * z));
      return factor == 0.f ? -0.f : x * factor;
    }
    case UnaryOp::kIsNaN:
    case UnaryOp::kIsInf:
    case UnaryOp::kIsPosInf:
    case UnaryOp::kIsNegInf:
    case UnaryOp::kNot:
      return predicate(op, x) ? 1.f : 0.f;  // the kernel writes these as bool bytes
  }
  return x;  // unreachable for a validated plan
}

void unary(const UnaryParams& p, const void* x, void* y) {
  if (!unary_supported(p.op, p.dtype)) return;
  if (p.op == UnaryOp::kNot) {
    const auto* in = static_cast<const unsigned char*>(x);
    auto* out = static_cast<unsigned char*>(y);
    for (int64_t i = 0; i < p.count; ++i) out[i] = in[i] == 0 ? 1 : 0;
  } else if (p.dtype == DType::kInt32) {
    unary_integer_loop<int32_t>(p, x, y);
  } else if (p.dtype == DType::kInt64) {
    unary_integer_loop<int64_t>(p, x, y);
  } else if (unary_is_predicate(p.op)) {
    const float* in = static_cast<const float*>(x);
    auto* out = static_cast<unsigned char*>(y);
    for (int64_t i = 0; i < p.count; ++i) out[i] = predicate(p.op, in[i]) ? 1 : 0;
  } else {
    const float* in = static_cast<const float*>(x);
    float* out = static_cast<float*>(y);
    for (int64_t i = 0; i < p.count; ++i) out[i] = apply_unary(p.op, in[i]);
  }
}

}  // namespace jetplan::kernels::cpu
