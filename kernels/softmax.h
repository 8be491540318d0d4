// The Softmax family (Softmax, LogSoftmax): parameters and CPU twin (kernels/cpu/softmax.cc);
// CUDA kernels in kernels/cuda/softmax.cu.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

// x and y [outer, axis, inner]; softmax (or log-softmax) along the middle dim. With
// masked_rows_zero a row whose max is -inf (every element -inf) gives 0 (log-softmax: -inf)
// rather than NaN (exp(-inf - -inf)): the attention of a query with every key masked, as ONNX's
// Attention defines it.
struct SoftmaxParams {
  int64_t outer = 1;
  int64_t axis = 1;
  int64_t inner = 1;
  bool log = false;
  bool masked_rows_zero = false;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void softmax(const SoftmaxParams& p, const float* x, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/softmax.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// The _rows variants run a warp per row: blocks of whole warps.
#define JP_CUDA_VARIANTS_softmax(X, F) \
  X(F, jp_softmax_f16, kF16, 0) \
  X(F, jp_softmax_f32, kF32, 0) \
  X(F, jp_softmax_rows_f16, kF16, 0) \
  X(F, jp_softmax_rows_f32, kF32, 0)
