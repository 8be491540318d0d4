// The Pointwise program (a fused chain of float elementwise ops). Each op applies the formula of
// its standalone kernel (apply_binary, apply_unary, apply_activation), so a fused plan computes
// what the unfused one does, in FP32, bit for bit.
//
// The program runs over tiles of consecutive output elements, one instruction over the whole
// tile before the next: the dispatch is paid once per tile, the arithmetic loops are plain, and
// each load walks its input with an odometer instead of dividing per element.
#include "kernels/activation.h"
#include "kernels/binary.h"
#include "kernels/cpu/half.h"
#include "kernels/pointwise.h"
#include "kernels/unary.h"

namespace jetplan::kernels::cpu {
namespace {

constexpr int64_t kTile = 256;

// out[i] = input k at output element first + i, for i in [0, len).
void load_tile(const PointwiseParams& p, int32_t k, DType dtype, const void* x, int64_t first,
               int64_t len, float* out) {
  int64_t coord[kMaxRank];
  int64_t rest = first, off = 0;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    coord[d] = rest % p.out_dims[d];
    rest /= p.out_dims[d];
    off += coord[d] * p.in_strides[k][d];
  }
  const auto* h = static_cast<const uint16_t*>(x);
  const auto* f = static_cast<const float*>(x);
  for (int64_t i = 0; i < len; ++i) {
    out[i] = dtype == DType::kFloat16 ? half_to_float(h[off]) : f[off];
    for (int32_t d = p.rank - 1; d >= 0; --d) {  // next element: carry through the dims
      off += p.in_strides[k][d];
      if (++coord[d] < p.out_dims[d]) break;
      off -= coord[d] * p.in_strides[k][d];
      coord[d] = 0;
    }
  }
}

void binary_tile(BinaryOp op, const float* a, const float* b, int64_t len, float* y) {
  switch (op) {  // the four plain ones as loops the compiler can vectorize
    case BinaryOp::kAdd:
      for (int64_t i = 0; i < len; ++i) y[i] = a[i] + b[i];
      return;
    case BinaryOp::kSub:
      for (int64_t i = 0; i < len; ++i) y[i] = a[i] - b[i];
      return;
    case BinaryOp::kMul:
      for (int64_t i = 0; i < len; ++i) y[i] = a[i] * b[i];
      return;
    case BinaryOp::kDiv:
      for (int64_t i = 0; i < len; ++i) y[i] = a[i] / b[i];
      return;
    case BinaryOp::kMax:
    case BinaryOp::kMin:
    case BinaryOp::kPow:
    case BinaryOp::kPRelu:
      for (int64_t i = 0; i < len; ++i) y[i] = apply_binary(op, a[i], b[i]);
      return;
  }
}

}  // namespace

void pointwise_chain(const PointwiseParams& p, DType dtype, const void* const* inputs, void* y) {
  if (p.num_instrs < 1) return;  // plan load refuses such programs
  int64_t count = 1;
  for (int32_t d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  float reg[kMaxPointwiseInstrs][kTile];
  for (int64_t first = 0; first < count; first += kTile) {
    const int64_t len = count - first < kTile ? count - first : kTile;
    for (int32_t r = 0; r < p.num_instrs; ++r) {
      const PointwiseInstr& in = p.program[r];
      float* out = reg[r];
      switch (in.kind) {  // register sources are earlier instructions (plan load checked)
        case PointwiseInstrKind::kLoad:
          load_tile(p, in.op, dtype, inputs[in.op], first, len, out);
          break;
        case PointwiseInstrKind::kBinary:
          binary_tile(static_cast<BinaryOp>(in.op), reg[in.a], reg[in.b], len, out);
          break;
        case PointwiseInstrKind::kUnary: {
          const float* a = reg[in.a];
          for (int64_t i = 0; i < len; ++i) out[i] = apply_unary(static_cast<UnaryOp>(in.op), a[i]);
          break;
        }
        case PointwiseInstrKind::kActivation: {
          const float* a = reg[in.a];
          for (int64_t i = 0; i < len; ++i) out[i] = apply_activation(in.act, a[i]);
          break;
        }
      }
    }
    const float* result = reg[p.num_instrs - 1];
    if (dtype == DType::kFloat16) {
      auto* h = static_cast<uint16_t*>(y) + first;
      for (int64_t i = 0; i < len; ++i) h[i] = half_from_float(result[i]);
    } else {
      auto* f = static_cast<float*>(y) + first;
      for (int64_t i = 0; i < len; ++i) f[i] = result[i];
    }
  }
}

}  // namespace jetplan::kernels::cpu
