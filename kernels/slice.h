// The Slice family (Slice, Split): parameters and CPU twin (kernels/cpu/slice.cc); CUDA kernel in
// kernels/cuda/slice.cu. Element counts, dims, strides and offsets are in elements; coordinates are
// row-major with the last dim fastest; only the first `rank` entries of a per-dim array are read
// (rank 0 is one element).
#pragma once

#include <cstdint>

#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// y[c] = x[starts[d] + c[d] * steps[d] for each d], x dense with shape x_dims, y dense with shape
// out_dims. Starts are resolved (no negative or clamped values left): plan load checks that
// starts[d] and starts[d] + (out_dims[d] - 1) * steps[d] lie in [0, x_dims[d]) whenever
// out_dims[d] > 0. Steps are nonzero and may be negative. Split is one Slice per output.
struct SliceParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t x_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  int64_t starts[kMaxRank] = {};
  int64_t steps[kMaxRank] = {};
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void slice(const SliceParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/slice.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_slice(X, F) \
  X(F, jp_slice, kAny, 0)
