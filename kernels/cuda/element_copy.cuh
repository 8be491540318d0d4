// One element of any size from one place to another, for the kernels that move elements of
// p.elem_bytes without looking at their values (Where, Broadcast, Pad): bit-exact for any dtype.
// And the grid loop those that read one input share (Broadcast, Pad).
#pragma once

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {

// One element of `bytes` bytes from src to dst (both aligned to it when it is 2, 4 or 8).
__device__ __forceinline__ void copy_elem(unsigned char* dst, const unsigned char* src,
                                          int64_t bytes) {
  switch (bytes) {
    case 1: *dst = *src; return;
    case 2: *reinterpret_cast<uint16_t*>(dst) = *reinterpret_cast<const uint16_t*>(src); return;
    case 4: *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(src); return;
    case 8: *reinterpret_cast<uint64_t*>(dst) = *reinterpret_cast<const uint64_t*>(src); return;
    default:
      for (int64_t k = 0; k < bytes; ++k) dst[k] = src[k];
  }
}

// The CUDA side of the twins' move_elements (kernels/cpu/dense_index.h): output element i
// (elem_bytes each) of the dense out_dims[0, rank) is x's element at the offset that
// source(i, &offset) gives, or, where source returns false (Pad's padding), the fill bytes (at
// most 8).
template <typename Source>
__device__ __forceinline__ void move_elements(const StepPointers& ptrs, int32_t rank,
                                              const int64_t* out_dims, int64_t elem_bytes,
                                              Source source,
                                              const unsigned char* fill = nullptr) {
  const auto* in = static_cast<const unsigned char*>(ptrs.in[0]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(rank, out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t offset = 0;
    unsigned char* dst = out + i * elem_bytes;
    if (source(i, &offset)) {
      copy_elem(dst, in + offset * elem_bytes, elem_bytes);
    } else {
      for (int64_t k = 0; k < elem_bytes && k < 8; ++k) dst[k] = fill[k];
    }
  }
}

}  // namespace jetplan::kernels::cuda
