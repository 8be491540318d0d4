// The Pointwise program (a fused chain of float elementwise ops), run per output element. Each
// op applies the formula of its standalone kernel (apply_binary, apply_unary, apply_activation),
// so a fused plan computes what the unfused one does, in FP32.
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/tensor_ops.h"

namespace jetplan::kernels::cpu {
namespace {

float load(DType dtype, const void* base, int64_t i) {
  if (dtype == DType::kFloat16) return half_to_float(static_cast<const uint16_t*>(base)[i]);
  return static_cast<const float*>(base)[i];
}

void store(DType dtype, void* base, int64_t i, float v) {
  if (dtype == DType::kFloat16) {
    static_cast<uint16_t*>(base)[i] = half_from_float(v);
  } else {
    static_cast<float*>(base)[i] = v;
  }
}

}  // namespace

void pointwise_chain(const PointwiseParams& p, DType dtype, const void* const* inputs, void* y) {
  if (p.num_instrs < 1) return;  // plan load refuses such programs
  int64_t count = 1;
  for (int32_t d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  float reg[kMaxPointwiseInstrs];
  int64_t offset[kMaxPointwiseInputs];
  for (int64_t i = 0; i < count; ++i) {
    // Peel the coordinates of output element i off from the last dim (the fastest) up.
    for (int32_t k = 0; k < p.num_inputs; ++k) offset[k] = 0;
    int64_t rest = i;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      for (int32_t k = 0; k < p.num_inputs; ++k) offset[k] += coord * p.in_strides[k][d];
    }
    for (int32_t r = 0; r < p.num_instrs; ++r) {
      const PointwiseInstr& in = p.program[r];
      switch (in.kind) {
        case PointwiseInstrKind::kLoad:
          reg[r] = load(dtype, inputs[in.op], offset[in.op]);
          break;
        case PointwiseInstrKind::kBinary:
          reg[r] = apply_binary(static_cast<BinaryOp>(in.op), reg[in.a], reg[in.b]);
          break;
        case PointwiseInstrKind::kUnary:
          reg[r] = apply_unary(static_cast<UnaryOp>(in.op), reg[in.a]);
          break;
        case PointwiseInstrKind::kActivation:
          reg[r] = apply_activation(in.act, reg[in.a]);
          break;
      }
    }
    store(dtype, y, i, reg[p.num_instrs - 1]);
  }
}

}  // namespace jetplan::kernels::cpu
