// The MaxUnpool family (ONNX MaxUnpool): parameters and CPU twin (kernels/cpu/max_unpool.cc);
// CUDA kernels in kernels/cuda/max_unpool.cu.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/host_device.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// y (y_count elements of elem_bytes bytes) is all zero bytes but y[target(indices[k])] = x[k]
// for k = 0, 1, ..., x_count - 1 in that order: the last of duplicate targets wins, as in ONNX's
// reference. An index is a flat position in a tensor of index_dims (MaxPool's Indices give
// them so: the op's default output shape), whose element at each coordinate goes to the same
// coordinate of y (y_dims, each at least index_dims': an output_shape larger than the default
// pads each dim at its end); an index outside [0, the product of index_dims) writes nothing.
// Only bytes move: the twin and the CUDA kernels agree bit for bit on every dtype.
struct MaxUnpoolParams {
  int64_t x_count = 0;      // elements of x and of indices (Int64)
  int64_t y_count = 0;      // elements of y
  uint32_t elem_bytes = 4;  // 2, 4 or 8
  int32_t rank = 0;         // of y and of index_dims; 0: an index is a flat position of y
  int64_t index_dims[kMaxRank] = {};
  int64_t y_dims[kMaxRank] = {};
};

// Where x[k] goes: its index as a position of y, or -1.
JP_HD_INLINE int64_t max_unpool_target(const MaxUnpoolParams& p, const int64_t* indices,
                                       int64_t k) {
  int64_t at = indices[k];
  if (p.rank == 0) return at >= 0 && at < p.y_count ? at : -1;
  if (at < 0) return -1;
  int64_t out = 0, y_stride = 1;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    const int64_t c = at % p.index_dims[d];
    at /= p.index_dims[d];
    out += c * y_stride;
    y_stride *= p.y_dims[d];
  }
  return at == 0 ? out : -1;  // at > 0: the index was past the last element
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void max_unpool(const MaxUnpoolParams& p, const void* x, const int64_t* indices, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/max_unpool.cu (columns: kernels/cuda/variants.h). One cooperative
// grid in two phases around a grid-wide barrier, with a zeroed workspace of one int32 a y
// element (the winner: 1 + the largest k landing there) and the barrier's counter: y zeroed and
// each k's atomicMax, then the winners' copies. Any float dtype by its bytes (_b2, _b4, _b8).
#define JP_CUDA_VARIANTS_max_unpool(X, F)            \
  X(F, jp_max_unpool_b2, kAny, 256, kAny, 0, true, true) \
  X(F, jp_max_unpool_b4, kAny, 256, kAny, 0, true, true) \
  X(F, jp_max_unpool_b8, kAny, 256, kAny, 0, true, true)
