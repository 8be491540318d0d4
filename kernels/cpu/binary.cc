#include "kernels/binary.h"

#include "kernels/activation.h"
#include "kernels/cpu/dense_index.h"

namespace jetplan::kernels::cpu {

float apply_binary(BinaryOp op, float a, float b) { return binary_value(op, a, b); }

// The first `rank` entries of out_dims and the strides are used; rank 0 is a single element.
void binary(const BinaryParams& p, const float* a, const float* b, float* y) {
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = 0; i < count; ++i) {
    const OperandOffsets off = operand_offsets(i, p.rank, p.out_dims, p.a_strides, p.b_strides);
    y[i] = apply_activation(p.act, apply_binary(p.op, a[off.a], b[off.b]));
  }
}

}  // namespace jetplan::kernels::cpu
