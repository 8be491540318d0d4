// The ArgReduce family (ArgMax, ArgMin): parameters and CPU twin (kernels/cpu/arg_reduce.cc).
// No CUDA kernel yet.
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
