// The GatherElements family: parameters and CPU twin (kernels/cpu/gather_elements.cc); CUDA
// kernel in kernels/cuda/gather_elements.cu. Element counts, dims, strides and offsets are in elements; coordinates are row-major
// with the last dim fastest; only the first `rank` entries of a per-dim array are read (rank 0 is
// one element).
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// ONNX GatherElements: indices and y are dense with shape out_dims, data dense with shape
// data_dims (same rank; out_dims[d] <= data_dims[d] off the axis). y[c] = data[c with c[axis]
// replaced by idx[c]]. Negative and out-of-range indices behave as in GatherParams.
struct GatherElementsParams {
  int32_t rank = 0;
  int32_t axis = 0;
  int64_t elem_bytes = 4;
  DType index_dtype = DType::kInt64;
  int64_t data_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// indices: entries of p.index_dtype with the shape out_dims.
void gather_elements(const GatherElementsParams& p, const void* data, const void* indices, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernel of kernels/cuda/gather_elements.cu, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h): elements of 1, 2, 4 or 8 bytes,
// whatever their dtype.
#define JP_CUDA_VARIANTS_gather_elements(X, F) \
  X(F, jp_gather_elements, kAny, 0)
