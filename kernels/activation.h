// The Activation family (Relu, Sigmoid, Gelu, ... as one op): parameters and CPU twin
// (kernels/cpu/activation.cc); CUDA kernels in kernels/cuda/activation.cu. The formulas are
// kernels/scalar_ops.h's; the Activation struct (kernels/activation_function.h) is also the
// fused epilogue of Conv, Gemm and the normalizations.
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"

namespace jetplan::kernels {

// y[i] = act(x[i]) for i in [0, count).
struct ActivationParams {
  int64_t count = 0;
  Activation act;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

float apply_activation(const Activation& act, float x);
// y may alias x.
void activation(const ActivationParams& p, const float* x, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/activation.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_activation(X, F) \
  X(F, jp_activation_f16, kF16, 0) \
  X(F, jp_activation_f32, kF32, 0)
