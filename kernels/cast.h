// The Cast family: parameters and CPU twin (kernels/cpu/cast.cc); CUDA kernels in
// kernels/cuda/cast.cu.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace jetplan::kernels {

// ONNX Cast of `count` elements between any two DTypes:
// - float to float rounds to nearest even (float16 per IEEE 754 binary16, overflow to infinity);
// - float to integer truncates toward zero and saturates at the target's range (ONNX leaves
//   out-of-range values to the implementation); NaN gives 0;
// - integer to integer keeps the low bits (two's complement wrap, as numpy and C do);
// - integer to float rounds to nearest even;
// - anything to bool is (x != 0), so NaN gives true; bool to anything is 0 or 1;
// - to bfloat16 goes through float32 (rounded to nearest even), which is then rounded to its
//   upper 16 bits (to nearest even, as ONNX's reference does; NaN stays NaN): see
//   kernels/cpu/bfloat16.h. From bfloat16 is exact to float32, then as from float32;
// - to the same dtype copies the bits (NaN payloads included).
// The CUDA kernels compute the same values (jp_cast_any takes every pair the typed kernels leave
// out); a NaN's payload there is the hardware's.
struct CastParams {
  DType from = DType::kFloat32;
  DType to = DType::kFloat32;
  int64_t count = 0;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// y may not alias x, even when both dtypes have the same size.
void cast(const CastParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/cast.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// dtype is the source's, out_dtype the destination's (the CUDA backend checks both when it
// binds a plan).
#define JP_CUDA_VARIANTS_cast(X, F) \
  X(F, jp_cast_f32_f16, kF32, 0, kF16) \
  X(F, jp_cast_f16_f32, kF16, 0, kF32) \
  X(F, jp_cast_i64_f16, kI64, 0, kF16) \
  X(F, jp_cast_i64_f32, kI64, 0, kF32) \
  X(F, jp_cast_i32_f16, kI32, 0, kF16) \
  X(F, jp_cast_i32_f32, kI32, 0, kF32) \
  X(F, jp_cast_i8_f16, kI8, 0, kF16) \
  X(F, jp_cast_i8_f32, kI8, 0, kF32) \
  X(F, jp_cast_u8_f16, kU8, 0, kF16) \
  X(F, jp_cast_u8_f32, kU8, 0, kF32) \
  X(F, jp_cast_b8_f16, kBool, 0, kF16) \
  X(F, jp_cast_b8_f32, kBool, 0, kF32) \
  X(F, jp_cast_f16_b8, kF16, 0, kBool) \
  X(F, jp_cast_f32_b8, kF32, 0, kBool) \
  X(F, jp_cast_i64_b8, kI64, 0, kBool) \
  X(F, jp_cast_i32_b8, kI32, 0, kBool) \
  X(F, jp_cast_i8_b8, kI8, 0, kBool) \
  X(F, jp_cast_u8_b8, kU8, 0, kBool) \
  X(F, jp_cast_any, kAny, 0, kAny) \
  JP_CUDA_CASTS_TO_INTEGER(X, F)

// The casts to an integer (kernels/cuda/cast.cu cast_to_integer), rows as above: from Float16 or
// Float32 (truncated toward zero and saturated, NaN 0), from another integer (its low bits) or
// from Bool (0 or 1), to Int64, Int32, Int8 or UInt8 (exported index arithmetic: .long() of a
// float, int64 <-> int32). cast_select.cc reads its table from these rows too.
#define JP_CUDA_CASTS_TO_INTEGER(X, F) \
  X(F, jp_cast_f16_i64, kF16, 0, kI64) \
  X(F, jp_cast_f16_i32, kF16, 0, kI32) \
  X(F, jp_cast_f16_i8, kF16, 0, kI8) \
  X(F, jp_cast_f16_u8, kF16, 0, kU8) \
  X(F, jp_cast_f32_i64, kF32, 0, kI64) \
  X(F, jp_cast_f32_i32, kF32, 0, kI32) \
  X(F, jp_cast_f32_i8, kF32, 0, kI8) \
  X(F, jp_cast_f32_u8, kF32, 0, kU8) \
  X(F, jp_cast_i64_i32, kI64, 0, kI32) \
  X(F, jp_cast_i64_i8, kI64, 0, kI8) \
  X(F, jp_cast_i64_u8, kI64, 0, kU8) \
  X(F, jp_cast_i32_i64, kI32, 0, kI64) \
  X(F, jp_cast_i32_i8, kI32, 0, kI8) \
  X(F, jp_cast_i32_u8, kI32, 0, kU8) \
  X(F, jp_cast_i8_i64, kI8, 0, kI64) \
  X(F, jp_cast_i8_i32, kI8, 0, kI32) \
  X(F, jp_cast_i8_u8, kI8, 0, kU8) \
  X(F, jp_cast_u8_i64, kU8, 0, kI64) \
  X(F, jp_cast_u8_i32, kU8, 0, kI32) \
  X(F, jp_cast_u8_i8, kU8, 0, kI8) \
  X(F, jp_cast_b8_i64, kBool, 0, kI64) \
  X(F, jp_cast_b8_i32, kBool, 0, kI32) \
  X(F, jp_cast_b8_i8, kBool, 0, kI8) \
  X(F, jp_cast_b8_u8, kBool, 0, kU8)
