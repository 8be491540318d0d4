#include "kernels/activation.h"
#include "kernels/binary.h"

namespace jetplan::kernels::cpu {

float apply_binary(BinaryOp op, float a, float b) { return binary_value(op, a, b); }

// The first `rank` entries of out_dims and the strides are used; rank 0 is a single element.
void binary(const BinaryParams& p, const float* a, const float* b, float* y) {
  int64_t count = 1;
  for (int d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  for (int64_t i = 0; i < count; ++i) {
    // Peel the coordinates of output element i off from the last dim (the fastest) up.
    int64_t rest = i, a_off = 0, b_off = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      a_off += coord * p.a_strides[d];
      b_off += coord * p.b_strides[d];
    }
    y[i] = apply_activation(p.act, apply_binary(p.op, a[a_off], b[b_off]));
  }
}

}  // namespace jetplan::kernels::cpu
