// The ArgReduce family (ArgMax, ArgMin): parameters and CPU twin (kernels/cpu/arg_reduce.cc);
// CUDA kernels in kernels/cuda/arg_reduce.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

enum class ArgKind : uint8_t { kMax = 0, kMin = 1 };

// x [outer, axis, inner] -> y int64 [outer, inner]: the index along the axis of the largest (or
// smallest) element; equal elements give the first index, or the last with select_last_index.
// NaN counts as the extreme for both kinds, as numpy's argmax/argmin do. axis >= 1.
struct ArgReduceParams {
  ArgKind kind = ArgKind::kMax;
  bool select_last_index = false;
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// y: int64 indices.
void arg_reduce(const ArgReduceParams& p, const float* x, int64_t* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/arg_reduce.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h): Float16 or Float32 x, Int64 y.
#define JP_CUDA_VARIANTS_arg_reduce(X, F) \
  X(F, jp_arg_reduce_f16, kF16, 0, kI64) \
  X(F, jp_arg_reduce_f32, kF32, 0, kI64)
