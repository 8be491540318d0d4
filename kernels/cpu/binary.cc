#include "kernels/binary.h"

#include "kernels/activation.h"
#include "kernels/cpu/dense_index.h"
#include "kernels/int8_epilogue.h"

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

void binary_add_int8(const BinaryParams& p, const int8_t* a, const int8_t* b, const float* scales,
                     int8_t* y) {
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = 0; i < count; ++i) {
    const OperandOffsets off = operand_offsets(i, p.rank, p.out_dims, p.a_strides, p.b_strides);
    const float real = int8_add_real(a[off.a], scales[0], b[off.b], scales[1]);
    y[i] = int8_quantize(activation_value(p.act, real), scales[2]);
  }
}

void binary_to_int8(const BinaryParams& p, const float* a, const float* b, float inv_y, int8_t* y) {
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = 0; i < count; ++i) {
    const OperandOffsets off = operand_offsets(i, p.rank, p.out_dims, p.a_strides, p.b_strides);
    y[i] = int8_quantize(activation_value(p.act, binary_value(p.op, a[off.a], b[off.b])), inv_y);
  }
}

}  // namespace jetplan::kernels::cpu
