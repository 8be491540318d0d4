// The CumSum family (ONNX CumSum and CumProd): parameters and CPU twin (kernels/cpu/cum_sum.cc);
// CUDA kernels in kernels/cuda/cum_sum.cu.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/host_device.h"

namespace jetplan::kernels {

// x and y [outer, length, inner] of `dtype`; y holds the running sums along the middle dim:
// y[j] = x[0] + ... + x[j] (exclusive: + x[j - 1], y[0] = 0), from the end of the dim when
// `reverse`. `product`: running products instead, y[j] = x[0] * ... * x[j] (exclusive: y[0] = 1).
// Each lane (outer, inner) adds (multiplies) in order, one element after the other, in the
// dtype's accumulator (cum_sum_supported): the CPU twin and the CUDA kernels combine the same
// numbers in the same order, ((x[0] op x[1]) op x[2]) ..., so float32, float64 and the integers
// agree bit for bit; float16 accumulates in float32 and rounds each output once.
struct CumSumParams {
  DType dtype = DType::kFloat32;
  int64_t outer = 1;
  int64_t length = 1;
  int64_t inner = 1;
  bool exclusive = false;
  bool reverse = false;
  bool product = false;
};

// float32, float16, float64, int32 and int64 (integers wrap as two's complement, sums and
// products alike, as ONNX Runtime's).
constexpr bool cum_sum_supported(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kFloat64 ||
         t == DType::kInt32 || t == DType::kInt64;
}

// The lane (outer o, inner i) in element offsets: its first element and the step between two.
struct CumSumLane {
  int64_t base;
  int64_t step;
};
JP_HD_INLINE CumSumLane cum_sum_lane(const CumSumParams& p, int64_t lane) {
  const int64_t o = lane / p.inner, i = lane % p.inner;
  const int64_t first = o * p.length * p.inner + i;
  CumSumLane lane_at;
  lane_at.base = p.reverse ? first + (p.length - 1) * p.inner : first;
  lane_at.step = p.reverse ? -p.inner : p.inner;
  return lane_at;
}

// What a lane starts from and how it takes in the next element: the one definition the twin and
// the CUDA kernels share, so both associate left to right, acc op x[j]. Acc is unsigned for the
// integers: a defined wrap, whose low bits are the two's-complement sum or product.
template <typename Acc>
JP_HD_INLINE Acc cum_sum_identity(const CumSumParams& p) {
  return p.product ? Acc(1) : Acc(0);
}
template <typename Acc>
JP_HD_INLINE Acc cum_sum_combine(const CumSumParams& p, Acc acc, Acc v) {
  return p.product ? Acc(acc * v) : Acc(acc + v);
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// A dtype that cum_sum_supported rejects is refused at plan load; given one anyway, this writes
// nothing.
void cum_sum(const CumSumParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/cum_sum.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// One thread per lane; sums and products share the kernels (CumSumParams::product).
#define JP_CUDA_VARIANTS_cum_sum(X, F) \
  X(F, jp_cum_sum_f32, kF32, 0) \
  X(F, jp_cum_sum_f16, kF16, 0) \
  X(F, jp_cum_sum_i32, kI32, 0) \
  X(F, jp_cum_sum_i64, kI64, 0) \
  X(F, jp_cum_sum_f64, kF64, 0)
