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

}  // namespace jetplan::kernels
