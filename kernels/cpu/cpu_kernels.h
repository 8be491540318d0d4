// CPU reference kernels: plain loops, obviously correct, FP32. They are the twins every CUDA
// kernel is checked against and the CPU backend of libjetplan. They allocate nothing, never fail
// (the parameters were validated at plan load) and are deterministic: reductions run in a fixed
// order. Pointers are borrowed for the duration of the call; optional ones may be null when the
// matching has_* flag is false. Outputs never alias inputs unless stated.
#pragma once

#include "kernels/params.h"

namespace jetplan::kernels::cpu {

float apply_activation(const Activation& act, float x);
// One Binary op on two values (the Binary kernel's formula, for the fused pointwise chain).
float apply_binary(BinaryOp op, float a, float b);

void conv(const ConvParams& p, const float* x, const float* w, const float* bias,
          const float* residual, float* y);
void pool(const PoolParams& p, const float* x, float* y, int64_t* indices = nullptr);
void gemm(const GemmParams& p, const float* a, const float* b, const float* c,
          const float* residual, float* y);
// For steps without a residual (p.has_residual false).
inline void gemm(const GemmParams& p, const float* a, const float* b, const float* c, float* y) {
  gemm(p, a, b, c, nullptr, y);
}
void binary(const BinaryParams& p, const float* a, const float* b, float* y);
// y may alias x.
void activation(const ActivationParams& p, const float* x, float* y);
void softmax(const SoftmaxParams& p, const float* x, float* y);
void batch_norm(const BatchNormParams& p, const float* x, const float* scale, const float* bias,
                const float* mean, const float* var, float* y);
// inputs[i] points to input i; num_inputs entries.
void concat(const ConcatParams& p, const void* const* inputs, void* y);
// The Pointwise program over float tensors: dtype kFloat32 or kFloat16 (IEEE half bits)
// storage for every input and y, FP32 arithmetic; inputs[k] points to step input k.
void pointwise_chain(const PointwiseParams& p, DType dtype, const void* const* inputs, void* y);
// y may equal x (then nothing is copied).
void copy(const CopyParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu
