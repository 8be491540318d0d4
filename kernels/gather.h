// The Gather family: parameters and CPU twin (kernels/cpu/gather.cc); CUDA kernel in
// kernels/cuda/gather.cu.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace jetplan::kernels {

// ONNX Gather. data is viewed as [outer, axis_len, inner], the indices as a flat list of
// num_indices entries of index_dtype (kInt32 or kInt64), y as [outer, num_indices, inner]:
// y[o, j, i] = data[o, idx[j], i]. A negative index counts from the end (+ axis_len); an index
// still outside [0, axis_len) after that yields zero bytes in y. ONNX makes such an index an
// error, which a kernel cannot report at run time; zeros are deterministic and visible.
struct GatherParams {
  int64_t outer = 1;
  int64_t axis_len = 1;
  int64_t inner = 1;
  int64_t num_indices = 0;
  int64_t elem_bytes = 4;
  DType index_dtype = DType::kInt64;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// indices: num_indices entries of p.index_dtype.
void gather(const GatherParams& p, const void* data, const void* indices, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/gather.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_gather(X, F) \
  X(F, jp_gather, kAny, 0)
