// The Pointwise family: a fused chain of float elementwise ops (Binary, Unary, Activation
// formulas of kernels/scalar_ops.h) run as one program per element. Parameters and CPU twin
// (kernels/cpu/pointwise.cc); CUDA kernels in kernels/cuda/pointwise.cu.
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"
#include "kernels/dtype.h"
#include "kernels/host_device.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// A chain of float elementwise ops run as one program per output element (OpFamily Pointwise):
// instruction i computes register i from a step input or earlier registers; the last register
// is y[i]. Step input k is read at sum_d coord_d * in_strides[k][d] over the dense output shape
// out_dims (stride 0 broadcasts that dim). Arithmetic is FP32 whatever the storage.
constexpr int kMaxPointwiseInputs = 8;
constexpr int kMaxPointwiseInstrs = 16;

enum class PointwiseInstrKind : uint8_t { kLoad = 0, kBinary = 1, kUnary = 2, kActivation = 3 };
constexpr int kPointwiseInstrKindCount = 4;

struct PointwiseInstr {
  PointwiseInstrKind kind = PointwiseInstrKind::kLoad;
  uint8_t op = 0;  // kLoad: input index; kBinary: BinaryOp; kUnary: UnaryOp (float math)
  uint8_t a = 0;   // source register (kBinary, kUnary, kActivation), < this instruction's index
  uint8_t b = 0;   // second source register (kBinary)
  Activation act;  // kActivation
};

struct PointwiseParams {
  int32_t rank = 0;  // of out_dims; 0 is one element
  int32_t num_inputs = 0;
  int32_t num_instrs = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t in_strides[kMaxPointwiseInputs][kMaxRank] = {};
  PointwiseInstr program[kMaxPointwiseInstrs] = {};
};

// The registers some instruction other than the very next one reads (bit r for register r):
// the eight-element CUDA kernel keeps only those in shared memory, one slot of
// kPointwiseSlotBytes each, in register order (the rest pass from one instruction to the next
// in machine registers). Its selector sizes the launch's shared memory by the count.
constexpr uint32_t kPointwiseSlotBytes = 8 * 128 * sizeof(float);
JP_HD_INLINE uint32_t pointwise_spilled(const PointwiseParams& p) {
  uint32_t mask = 0;
  for (int32_t r = 0; r < p.num_instrs && r < kMaxPointwiseInstrs; ++r) {
    const PointwiseInstr& in = p.program[r];
    if (in.kind == PointwiseInstrKind::kLoad) continue;
    if (in.a + 1 != r) mask |= 1u << (in.a % kMaxPointwiseInstrs);
    if (in.kind == PointwiseInstrKind::kBinary && in.b + 1 != r)
      mask |= 1u << (in.b % kMaxPointwiseInstrs);
  }
  return mask;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// The Pointwise program over float tensors: dtype kFloat32 or kFloat16 (IEEE half bits)
// storage for every input and y, FP32 arithmetic; inputs[k] points to step input k.
void pointwise_chain(const PointwiseParams& p, DType dtype, const void* const* inputs, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/pointwise.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// 128-thread blocks: the register file is a shared-memory column per thread.
#define JP_CUDA_VARIANTS_pointwise(X, F) \
  X(F, jp_pointwise_chain_f16, kF16, 128) \
  X(F, jp_pointwise_chain_f16_x4, kF16, 128) \
  X(F, jp_pointwise_chain_f16_x8, kF16, 128) \
  X(F, jp_pointwise_chain_f32, kF32, 128) \
  X(F, jp_pointwise_chain_f32_x4, kF32, 128)
