// The Transpose family (Transpose, DepthToSpace, SpaceToDepth, any strided view): parameters and
// CPU twin (kernels/cpu/transpose.cc); CUDA kernels in kernels/cuda/transpose.cu. Element counts,
// dims, strides and offsets are in elements; coordinates are row-major with the last dim fastest;
// only the first `rank` entries of a per-dim array are read (rank 0 is one element).
#pragma once

#include <cstdint>

#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// y[c] = x[sum_d c[d] * x_strides[d]] over the dense output shape out_dims. For Transpose with
// permutation perm, out_dims[d] = x_dims[perm[d]] and x_strides[d] is the dense stride of x's dim
// perm[d]. Any strided view fits (the converter expresses DepthToSpace/SpaceToDepth as
// reshape + transpose of rank up to 6). Strides are >= 0; plan load checks that the largest
// offset, sum_d (out_dims[d] - 1) * x_strides[d], lies inside x.
struct TransposeParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;  // of x
  int64_t out_dims[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  // x Float16 and y Float32: each element converted as it moves (a GPU plan's float32 output
  // written by its layout transpose: the output cast fused into it).
  bool half_to_float = false;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void transpose(const TransposeParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/transpose.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// Byte movers: any dtype. The tiled ones: 32 x 8 threads move 32 x 32 tiles through static
// shared memory. The h2f ones: FP16 in, FP32 out (the output cast fused into the transpose).
#define JP_CUDA_VARIANTS_transpose(X, F) \
  X(F, jp_transpose_b1, kAny, 0, 0, false, kAny, false) \
  X(F, jp_transpose_b2, kAny, 0, 0, false, kAny, false) \
  X(F, jp_transpose_b4, kAny, 0, 0, false, kAny, false) \
  X(F, jp_transpose_b8, kAny, 0, 0, false, kAny, false) \
  X(F, jp_transpose_tiled_b1, kAny, 256, 0, false, kAny, false) \
  X(F, jp_transpose_tiled_b2, kAny, 256, 0, false, kAny, false) \
  X(F, jp_transpose_tiled_b4, kAny, 256, 0, false, kAny, false) \
  X(F, jp_transpose_tiled_b8, kAny, 256, 0, false, kAny, false) \
  X(F, jp_transpose_h2f, kF16, 0, 0, false, kF32, false) \
  X(F, jp_transpose_tiled_h2f, kF16, 256, 0, false, kF32, false)
