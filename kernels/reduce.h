// The Reduce family (ReduceSum, ReduceMean, ... over any dims): parameters and CPU twin
// (kernels/cpu/reduce.cc); CUDA kernels in kernels/cuda/reduce.cu.
#pragma once

#include <cstdint>

#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

enum class ReduceOp : uint8_t {
  kSum = 0,
  kMean = 1,
  kMax = 2,        // NaN propagates
  kMin = 3,        // NaN propagates
  kProd = 4,
  kL1 = 5,         // sum |x|
  kL2 = 6,         // sqrt(sum x^2)
  kSumSquare = 7,  // sum x^2
  kLogSum = 8,     // log(sum x)
  kLogSumExp = 9,  // max + log(sum exp(x - max))
};
constexpr int kReduceOpCount = 10;

// x [in_dims] (rank dims); bit d of axis_mask set reduces dim d. y is [in_dims] with every
// reduced dim set to 1 (keepdims=0 drops those dims from the shape, not from the bytes). A mask of
// 0 applies the op to each element alone (Sum copies, L2 gives |x|); ONNX's noop_with_empty_axes
// is an Identity, which the converter emits as a copy instead. An empty reduced set gives the
// op's identity: Sum 0, Prod 1, Max -inf, Min +inf, LogSum and LogSumExp -inf, Mean NaN.
struct ReduceParams {
  ReduceOp op = ReduceOp::kSum;
  int32_t rank = 0;  // 0..kMaxRank
  int64_t in_dims[kMaxRank] = {};
  uint32_t axis_mask = 0;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void reduce(const ReduceParams& p, const float* x, float* y);
// Float64: the same in double throughout (the CUDA kernel too).
void reduce(const ReduceParams& p, const double* x, double* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/reduce.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_reduce(X, F) \
  X(F, jp_reduce_f16, kF16, 0) \
  X(F, jp_reduce_f32, kF32, 0) \
  X(F, jp_reduce_f64, kF64, 0)
