// The Copy family (Reshape, Flatten, Identity, ...): parameters and CPU twin
// (kernels/cpu/copy.cc); CUDA kernel in kernels/cuda/copy.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

// A byte copy (Reshape, Flatten, Identity); source and destination may overlap.
struct CopyParams {
  int64_t bytes = 0;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// y may equal x (then nothing is copied).
void copy(const CopyParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/copy.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_copy(X, F) \
  X(F, jp_copy, kAny, 0)
