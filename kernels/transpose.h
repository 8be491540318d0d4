// The Transpose family (Transpose, DepthToSpace, SpaceToDepth, any strided view): parameters and
// CPU twin (kernels/cpu/transpose.cc); CUDA kernels in kernels/cuda/transpose.cu. Element counts,
// dims, strides and offsets are in elements; coordinates are row-major with the last dim fastest;
// only the first `rank` entries of a per-dim array are read (rank 0 is one element).
#pragma once

#include <cstdint>

#include "kernels/dense_index.h"
#include "kernels/host_device.h"
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
  // x Float32 and y Float16: each element rounded to half (to nearest even) as it moves (a GPU
  // plan's float32 input read by its layout transpose: the input cast fused into it).
  bool float_to_half = false;
  // y a part of a larger tensor (a Transpose writing its share of a Concat in place): the dense
  // result's element i goes to y_index(p, i) (kernels/dense_index.h).
  JP_Y_BLOCK_FIELDS;
};

// The view of a transpose with its extent-1 dims dropped and each dim merged into the one before
// it where x holds the two as one: returns n, the dims in dims[0, n) and x's strides in
// strides[0, n) (both kMaxRank long). The tiled CUDA kernel and its selector find the same view.
JP_HD_INLINE int coalesce_transpose(const TransposeParams& p, int64_t* dims, int64_t* strides) {
  int n = 0;
  for (int32_t k = 0; k < p.rank; ++k) {
    if (p.out_dims[k] == 1) continue;
    if (n > 0 && strides[n - 1] == p.x_strides[k] * p.out_dims[k]) {
      dims[n - 1] *= p.out_dims[k];
      strides[n - 1] = p.x_strides[k];
    } else {
      dims[n] = p.out_dims[k];
      strides[n] = p.x_strides[k];
      ++n;
    }
  }
  return n;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void transpose(const TransposeParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/transpose.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// Byte movers: any dtype. The tiled ones: 32 x 8 threads move 32 x 32 tiles through static
// shared memory. The h2f ones: FP16 in, FP32 out (the output cast fused into the transpose);
// the f2h ones: FP32 in, FP16 out (the input cast fused into it).
#define JP_CUDA_VARIANTS_transpose(X, F) \
  X(F, jp_transpose_b1, kAny, 0) \
  X(F, jp_transpose_b2, kAny, 0) \
  X(F, jp_transpose_b4, kAny, 0) \
  X(F, jp_transpose_b8, kAny, 0) \
  X(F, jp_transpose_tiled_b1, kAny, 256) \
  X(F, jp_transpose_tiled_b2, kAny, 256) \
  X(F, jp_transpose_tiled_b4, kAny, 256) \
  X(F, jp_transpose_tiled_b8, kAny, 256) \
  X(F, jp_transpose_h2f, kF16, 0, kF32) \
  X(F, jp_transpose_tiled_h2f, kF16, 256, kF32) \
  X(F, jp_transpose_f2h, kF32, 0, kF16) \
  X(F, jp_transpose_tiled_f2h, kF32, 256, kF16)
