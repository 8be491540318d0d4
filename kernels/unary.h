// The Unary family (Abs, Exp, Erf, Sign, IsNaN, Not, ...): parameters and CPU twin
// (kernels/cpu/unary.cc); CUDA kernels in kernels/cuda/unary.cu. The per-element formulas are
// UnaryOp's in kernels/scalar_ops.h.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/scalar_ops.h"

namespace jetplan::kernels {

struct UnaryParams {
  UnaryOp op = UnaryOp::kAbs;
  DType dtype = DType::kFloat32;  // of x
  int64_t count = 0;
};

// Float32 takes every op but kNot; int32 and int64 take Abs, Neg and Sign (Abs and Neg of the
// most negative value give it back, as two's complement does); bool takes kNot.
constexpr bool unary_supported(UnaryOp op, DType t) {
  if (op == UnaryOp::kNot) return t == DType::kBool;
  if (t == DType::kFloat32) return true;
  if (t == DType::kInt32 || t == DType::kInt64)
    return op == UnaryOp::kAbs || op == UnaryOp::kNeg || op == UnaryOp::kSign;
  return false;
}

constexpr bool unary_is_predicate(UnaryOp op) {
  return op == UnaryOp::kIsNaN || op == UnaryOp::kIsInf || op == UnaryOp::kIsPosInf ||
         op == UnaryOp::kIsNegInf || op == UnaryOp::kNot;
}

constexpr DType unary_out_dtype(UnaryOp op, DType t) {
  return unary_is_predicate(op) ? DType::kBool : t;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// A pair that unary_supported rejects is refused at plan load; given one anyway, this writes
// nothing.
void unary(const UnaryParams& p, const void* x, void* y);
// Float32 unary math on one value (the op must be a float32 -> float32 one); lets a fused
// pointwise chain apply the same formula as the standalone kernel.
float apply_unary(UnaryOp op, float x);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/unary.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_unary(X, F) \
  X(F, jp_unary_f32, kF32, 0) \
  X(F, jp_unary_f16, kF16, 0) \
  X(F, jp_unary_pred_f32, kF32, 0, kBool) \
  X(F, jp_unary_pred_f16, kF16, 0, kBool) \
  X(F, jp_unary_i32, kI32, 0) \
  X(F, jp_unary_i64, kI64, 0) \
  X(F, jp_unary_not, kBool, 0)
