// Indexing of dense row-major tensors (last dim fastest) for the CPU twins: the strides of a
// shape and the byte movers' source offsets. Element counts and the two-operand broadcast offsets
// are kernels/dense_index.h, shared with the CUDA kernels.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/dense_index.h"

namespace jetplan::kernels::cpu {

// The dense strides of dims[0, rank) into strides[0, rank); returns the element count.
inline int64_t dense_strides(int32_t rank, const int64_t* dims, int64_t* strides) {
  int64_t dense = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    strides[d] = dense;
    dense *= dims[d];
  }
  return dense;
}

// The element offset in x of output element i of the dense shape out_dims[0, rank): the sum, over
// the dims from the last (the fastest) up, of source(d, coord) for i's coordinate coord in dim d;
// -1 as soon as one part is negative (a coordinate outside x, such as Pad's padding).
template <typename Source>
inline int64_t source_offset(int64_t i, int32_t rank, const int64_t* out_dims, Source source) {
  int64_t rest = i, offset = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    const int64_t part = source(d, rest % out_dims[d]);
    rest /= out_dims[d];
    if (part < 0) return -1;
    offset += part;
  }
  return offset;
}

// The byte movers (Pad, Slice, Broadcast, Transpose): writes every element (elem_bytes each) of
// the dense output out_dims[0, rank) in y from x's element source_offset(i, rank, out_dims,
// source), or from fill where that is -1.
template <typename Source>
inline void move_elements(int32_t rank, const int64_t* out_dims, int64_t elem_bytes,
                          const void* x, void* y, Source source, const void* fill = nullptr) {
  const int64_t count = dense_count(rank, out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t offset = source_offset(i, rank, out_dims, source);
    std::memcpy(out + i * elem_bytes, offset < 0 ? fill : in + offset * elem_bytes, elem);
  }
}

}  // namespace jetplan::kernels::cpu
