#include <cmath>

#include "kernels/cpu/cpu_kernels.h"

namespace jetplan::kernels::cpu {

float apply_binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd:
      return a + b;
    case BinaryOp::kSub:
      return a - b;
    case BinaryOp::kMul:
      return a * b;
    case BinaryOp::kDiv:
      return a / b;
    // NaN propagates from either side (as numpy.maximum/minimum do), so a bad value upstream
    // stays visible instead of being silently replaced.
    case BinaryOp::kMax:
      return (a > b || a != a) ? a : b;
    case BinaryOp::kMin:
      return (a < b || a != a) ? a : b;
    case BinaryOp::kPow:
      return std::pow(a, b);
    case BinaryOp::kPRelu:
      return a < 0.f ? a * b : a;
  }
  return a;  // unreachable for a validated plan
}

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
