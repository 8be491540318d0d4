// The Broadcast family (Expand, Tile): parameters and CPU twin (kernels/cpu/broadcast.cc); CUDA
// kernel in kernels/cuda/broadcast.cu. Element counts, dims, strides and offsets are in elements;
// coordinates are row-major with the last dim fastest; only the first `rank` entries of a per-dim
// array are read (rank 0 is one element).
#pragma once

#include <cstdint>

#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// Broadcast copy, for Expand and Tile: y[c] = x[sum_d (c[d] % x_dims[d]) * x_strides[d]] over the
// dense out_dims. Expand: x_dims[d] = 1 (or stride 0) where x is broadcast, x_dims[d] =
// out_dims[d] elsewhere. Tile: x_dims are x's dims and out_dims[d] = x_dims[d] * repeats[d].
// x_dims[d] >= 1 for every d; strides (>= 0) may describe any view of x, whose largest offset
// sum_d (x_dims[d] - 1) * x_strides[d] plan load checks against x.
struct BroadcastParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t out_dims[kMaxRank] = {};
  int64_t x_dims[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void broadcast(const BroadcastParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/broadcast.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_broadcast(X, F) \
  X(F, jp_broadcast, kAny, 0)
