// The Concat family: parameters and CPU twin (kernels/cpu/concat.cc); CUDA kernel in
// kernels/cuda/concat.cu.
#pragma once

#include <cstdint>

#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// Inputs viewed as [outer, axis_len[i], inner] elements of elem_bytes each, written side by side
// into y [outer, sum(axis_len), inner]. An input with axis_len 0 may be null.
struct ConcatParams {
  int64_t outer = 1;
  int64_t inner = 1;
  int64_t elem_bytes = 4;
  int32_t num_inputs = 0;
  int64_t axis_len[kMaxConcatInputs] = {};
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// inputs[i] points to input i; num_inputs entries.
void concat(const ConcatParams& p, const void* const* inputs, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/concat.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_concat(X, F) \
  X(F, jp_concat, kAny, 0)
