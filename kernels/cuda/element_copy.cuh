// One element of any size from one place to another, for the kernels that move elements of
// p.elem_bytes without looking at their values (Where, Broadcast, Pad): bit-exact for any dtype.
#pragma once

#include <cstdint>

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

}  // namespace jetplan::kernels::cuda
