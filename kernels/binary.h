// The Binary family (float Add, Sub, Mul, Div, Max, Min, Pow, PRelu with numpy broadcasting;
// Add also of Int8 with requantization; any of them from float into Int8):
// parameters and CPU twin (kernels/cpu/binary.cc); CUDA kernels in kernels/cuda/binary.cu. The
// per-element formula is BinaryOp's in kernels/scalar_ops.h.
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"
#include "kernels/host_device.h"
#include "kernels/scalar_ops.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// y[i] = act(op(a[i . a_strides], b[i . b_strides])) over the dense output shape out_dims;
// a stride of 0 broadcasts that dim. Only the first `rank` entries are read; rank 0 is one
// element. Max and Min propagate NaN from either side, as numpy.maximum/minimum do.
struct BinaryParams {
  BinaryOp op = BinaryOp::kAdd;
  int32_t rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
  Activation act;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void binary(const BinaryParams& p, const float* a, const float* b, float* y);
// One Binary op on two values (the Binary kernel's formula, for the fused pointwise chain).
float apply_binary(BinaryOp op, float a, float b);

// An INT8 plan's Add of two Int8 tensors into an Int8 one, each with its scale (scales: a's,
// b's and the inverse of y's, a Float32 weight of the step): y = saturate(round_half_even(
// act(a * sa + b * sb) / sy)), the real value by int8_add_real (kernels/int8_epilogue.h), the
// activation on it, then int8_quantize: the CUDA kernel's operations, so the same bits for the
// piecewise-linear activations.
void binary_add_int8(const BinaryParams& p, const int8_t* a, const int8_t* b, const float* scales,
                     int8_t* y);

// An INT8 plan's float Binary whose only readers are INT8 steps (a squeeze-excitation Mul in
// front of an INT8 conv): y = int8_quantize(act(op(a, b)), inv_y), inv_y the inverse of y's
// scale; the CUDA kernels' operations (jp_binary_q8_*), so the same bits for the same operands
// and the piecewise-linear activations the converter lets it fuse.
void binary_to_int8(const BinaryParams& p, const float* a, const float* b, float inv_y, int8_t* y);

}  // namespace jetplan::kernels::cpu

namespace jetplan::kernels {

// Whether a Float16 Binary takes the 8-wide CUDA form (jp_binary_x8_f16, jp_binary_q8_x8_f16):
// the last dim a multiple of 8, each operand along it contiguous (stride 1, its other strides
// multiples of 8) or broadcast (stride 0), fewer than 2^31 elements. The selection and the
// kernels both ask.
JP_HD_INLINE bool binary_x8_fits(const BinaryParams& p) {
  if (p.rank < 1 || p.rank > kMaxRank) return false;
  const int r = p.rank - 1;
  const bool a_along = p.a_strides[r] == 1, b_along = p.b_strides[r] == 1;
  if (p.out_dims[r] % 8 != 0 || (!a_along && p.a_strides[r] != 0) ||
      (!b_along && p.b_strides[r] != 0))
    return false;
  int64_t count = 1;
  for (int d = 0; d <= r; ++d) {
    count *= p.out_dims[d];
    if (d < r && ((a_along && p.a_strides[d] % 8 != 0) || (b_along && p.b_strides[d] % 8 != 0)))
      return false;
  }
  return count < (int64_t{1} << 31);
}

}  // namespace jetplan::kernels

// CUDA kernels of kernels/cuda/binary.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_binary(X, F) \
  X(F, jp_binary_f16, kF16, 0) \
  X(F, jp_binary_f32, kF32, 0) \
  X(F, jp_binary_add_i8, kI8, 0) \
  X(F, jp_binary_q8_f16, kF16, 0, kI8) \
  X(F, jp_binary_q8_f32, kF32, 0, kI8) \
  X(F, jp_binary_x8_f16, kF16, 0) \
  X(F, jp_binary_q8_x8_f16, kF16, 0, kI8)
