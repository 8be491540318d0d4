// Float elementwise math on the device shared by the standalone kernels and the fused
// Pointwise chain (pointwise_chain.cu), so both compute the same formula: the Binary ops (twin
// kernels/cpu/binary.cc apply_binary) and the Unary ops (twin kernels/cpu/unary.cc apply_unary,
// accurate libdevice functions, not the fast intrinsics).
#pragma once

#include "kernels/params.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {

__device__ __forceinline__ float binary_op(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMax: return (a != a || b != b) ? a + b : fmaxf(a, b);
    case BinaryOp::kMin: return (a != a || b != b) ? a + b : fminf(a, b);
    case BinaryOp::kPow: return powf(a, b);
    case BinaryOp::kPRelu: return a < 0.f ? a * b : a;
  }
  return a;
}

__device__ __forceinline__ float softplus(float x) {
  return x > 0.f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

__device__ __forceinline__ bool unary_predicate(UnaryOp op, float x) {
  if (op == UnaryOp::kIsNaN) return isnan(x);
  if (op == UnaryOp::kIsInf) return isinf(x);
  if (op == UnaryOp::kIsPosInf) return isinf(x) && x > 0.f;
  if (op == UnaryOp::kIsNegInf) return isinf(x) && x < 0.f;
  return false;
}

__device__ __forceinline__ float unary_float(UnaryOp op, float x) {
  switch (op) {
    case UnaryOp::kAbs: return fabsf(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kReciprocal: return 1.f / x;
    case UnaryOp::kFloor: return floorf(x);
    case UnaryOp::kCeil: return ceilf(x);
    case UnaryOp::kRound: return rintf(x);  // ties to even
    case UnaryOp::kSin: return sinf(x);
    case UnaryOp::kCos: return cosf(x);
    case UnaryOp::kTan: return tanf(x);
    case UnaryOp::kAsin: return asinf(x);
    case UnaryOp::kAcos: return acosf(x);
    case UnaryOp::kAtan: return atanf(x);
    case UnaryOp::kSinh: return sinhf(x);
    case UnaryOp::kCosh: return coshf(x);
    case UnaryOp::kAsinh: return asinhf(x);
    case UnaryOp::kAcosh: return acoshf(x);
    case UnaryOp::kAtanh: return atanhf(x);
    case UnaryOp::kErf: return erff(x);
    case UnaryOp::kSign: return x > 0.f ? 1.f : (x < 0.f ? -1.f : (x == 0.f ? 0.f : x));
    case UnaryOp::kSoftsign: return isinf(x) ? copysignf(1.f, x) : x / (1.f + fabsf(x));
    case UnaryOp::kSoftplus: return softplus(x);
    case UnaryOp::kMish: {
      const float t = tanhf(softplus(x));
      return t == 0.f ? copysignf(0.f, x) : x * t;
    }
    case UnaryOp::kGeluTanh: {
      const float z = 0.7978845608028654f * (x + 0.044715f * x * x * x);
      const float factor = 1.f / (1.f + expf(-2.f * z));
      return factor == 0.f ? -0.f : x * factor;
    }
    case UnaryOp::kIsNaN:
    case UnaryOp::kIsInf:
    case UnaryOp::kIsPosInf:
    case UnaryOp::kIsNegInf:
    case UnaryOp::kNot:
      return unary_predicate(op, x) ? 1.f : 0.f;
  }
  return x;
}

}  // namespace jetplan::kernels::cuda
