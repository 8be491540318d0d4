// Indexing of dense row-major tensors (last dim fastest) that the CPU twins and the CUDA kernels
// share (JP_HD_INLINE), so both sides count elements and broadcast operands by one definition:
// element counts, and the numpy-broadcast operand offsets of the two-operand families (Binary,
// Elementwise): output element i reads each operand at the sum of its coordinates times that
// operand's strides (a stride of 0 broadcasts the dim).
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace jetplan::kernels {

struct OperandOffsets {
  int64_t a = 0, b = 0;
};

// Elements of the dense shape dims[0, rank) (1 for rank 0).
JP_HD_INLINE int64_t dense_count(int32_t rank, const int64_t* dims) {
  int64_t count = 1;
  for (int32_t d = 0; d < rank; ++d) count *= dims[d];
  return count;
}

// Peels the coordinates of output element i off from the last dim (the fastest) up.
JP_HD_INLINE OperandOffsets operand_offsets(int64_t i, int32_t rank, const int64_t* dims,
                                            const int64_t* a_strides, const int64_t* b_strides) {
  OperandOffsets off;
  int64_t rest = i;
  for (int32_t d = rank - 1; d >= 0; --d) {
    const int64_t coord = rest % dims[d];
    rest /= dims[d];
    off.a += coord * a_strides[d];
    off.b += coord * b_strides[d];
  }
  return off;
}

// A step that writes its dense result into a part of a larger y (its share of a Concat, written
// in place: TransposeParams, ResizeParams) places it in blocks of y_block elements,
// y_block_stride apart from y_offset; y_block 0: y is the dense result. Its params declare the
// three (JP_Y_BLOCK_FIELDS); y_index() is where the result's element i goes in y.
#define JP_Y_BLOCK_FIELDS      \
  int64_t y_block = 0;         \
  int64_t y_block_stride = 0;  \
  int64_t y_offset = 0
template <typename P>
JP_HD_INLINE int64_t y_index(const P& p, int64_t i) {
  if (p.y_block == 0) return i;
  const int64_t k = i / p.y_block;
  return p.y_offset + k * p.y_block_stride + (i - k * p.y_block);
}

}  // namespace jetplan::kernels
