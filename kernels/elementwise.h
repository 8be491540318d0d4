// The Elementwise family (integer arithmetic, comparisons, logic, float64 math, FMod): parameters
// and CPU twin (kernels/cpu/elementwise.cc); CUDA kernels in kernels/cuda/elementwise.cu. The
// per-element formulas are ElementwiseOp's in kernels/scalar_ops.h.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/scalar_ops.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// y[i] = op(a[i . a_strides], b[i . b_strides]) over the dense out_dims, the stride convention of
// BinaryParams (0 broadcasts). a and b have `dtype`; y has elementwise_out_dtype(op, dtype).
struct ElementwiseParams {
  ElementwiseOp op = ElementwiseOp::kAdd;
  DType dtype = DType::kInt32;
  int32_t rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

constexpr bool elementwise_is_comparison(ElementwiseOp op) {
  return op == ElementwiseOp::kEqual || op == ElementwiseOp::kLess ||
         op == ElementwiseOp::kLessOrEqual || op == ElementwiseOp::kGreater ||
         op == ElementwiseOp::kGreaterOrEqual;
}

constexpr bool elementwise_is_logic(ElementwiseOp op) {
  return op == ElementwiseOp::kAnd || op == ElementwiseOp::kOr || op == ElementwiseOp::kXor;
}

// Bitwise and, or, xor and the shifts: integers only.
constexpr bool elementwise_is_bitwise(ElementwiseOp op) {
  return op == ElementwiseOp::kBitAnd || op == ElementwiseOp::kBitOr ||
         op == ElementwiseOp::kBitXor || op == ElementwiseOp::kShiftLeft ||
         op == ElementwiseOp::kShiftRight;
}

// Arithmetic: int32 and int64 (float32 arithmetic is BinaryParams), and int16, uint16, uint32,
// uint64; float64 (Add, Sub, Mul, Div, FMod, Max and Min as the float BinaryOps do,
// NaN propagating, and Pow); kFMod on float32 and float16 too (float16 in float32: the remainder
// is exact, so its one rounding back changes nothing). kMod and the bitwise ops (and, or, xor,
// shifts) are integers only, kPow float64 only.
// Comparisons: every dtype but bfloat16 (no op at all). Logic: bool. The CUDA kernels take all
// of these (float64 Pow through CUDA's pow, within 2 ulp of the twin's std::pow).
constexpr bool elementwise_supported(ElementwiseOp op, DType t) {
  if (t == DType::kBFloat16) return false;  // bfloat16 reaches Cast and data movement only
  if (elementwise_is_comparison(op)) return true;
  if (elementwise_is_logic(op)) return t == DType::kBool;
  if (op == ElementwiseOp::kPow) return t == DType::kFloat64;
  if (t == DType::kInt32 || t == DType::kInt64 || t == DType::kInt16 || t == DType::kUInt16 ||
      t == DType::kUInt32 || t == DType::kUInt64)
    return true;
  if (elementwise_is_bitwise(op)) return false;  // integers only
  if (t == DType::kFloat64) return op != ElementwiseOp::kMod;
  return op == ElementwiseOp::kFMod && (t == DType::kFloat32 || t == DType::kFloat16);
}

constexpr DType elementwise_out_dtype(ElementwiseOp op, DType t) {
  return elementwise_is_comparison(op) || elementwise_is_logic(op) ? DType::kBool : t;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// A pair that elementwise_supported rejects is refused at plan load; given one anyway, this
// writes nothing.
void elementwise(const ElementwiseParams& p, const void* a, const void* b, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/elementwise.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_elementwise(X, F) \
  X(F, jp_elementwise_cmp_f32, kF32, 0, kBool) \
  X(F, jp_elementwise_cmp_f16, kF16, 0, kBool) \
  X(F, jp_elementwise_cmp_f64, kF64, 0, kBool) \
  X(F, jp_elementwise_cmp_i8, kI8, 0, kBool) \
  X(F, jp_elementwise_cmp_u8, kU8, 0, kBool) \
  X(F, jp_elementwise_cmp_i32, kI32, 0, kBool) \
  X(F, jp_elementwise_cmp_i64, kI64, 0, kBool) \
  X(F, jp_elementwise_cmp_bool, kBool, 0) \
  X(F, jp_elementwise_cmp_i16, kI16, 0, kBool) \
  X(F, jp_elementwise_cmp_u16, kU16, 0, kBool) \
  X(F, jp_elementwise_cmp_u32, kU32, 0, kBool) \
  X(F, jp_elementwise_cmp_u64, kU64, 0, kBool) \
  X(F, jp_elementwise_i32, kI32, 0) \
  X(F, jp_elementwise_i64, kI64, 0) \
  X(F, jp_elementwise_i16, kI16, 0) \
  X(F, jp_elementwise_u16, kU16, 0) \
  X(F, jp_elementwise_u32, kU32, 0) \
  X(F, jp_elementwise_u64, kU64, 0) \
  X(F, jp_elementwise_f64, kF64, 0) \
  X(F, jp_elementwise_fmod_f32, kF32, 0) \
  X(F, jp_elementwise_fmod_f16, kF16, 0) \
  X(F, jp_elementwise_fmod_f64, kF64, 0)
