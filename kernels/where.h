// The Where family: parameters and CPU twin (kernels/cpu/where.cc); CUDA kernel in
// kernels/cuda/where.cu.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// ONNX Where: out[i] = cond[i . cond_strides] ? x[i . x_strides] : y[i . y_strides] over the
// dense out_dims (stride 0 broadcasts). cond is bool (any nonzero byte is true); x, y and out
// have elements of elem_bytes.
struct WhereParams {
  int32_t rank = 0;
  int64_t elem_bytes = 4;
  int64_t out_dims[kMaxRank] = {};
  int64_t cond_strides[kMaxRank] = {};
  int64_t x_strides[kMaxRank] = {};
  int64_t y_strides[kMaxRank] = {};
};

// The element that out[i] copies, for the CPU twin and the CUDA kernel: x's or y's as cond says.
JP_HD_INLINE const unsigned char* where_source(const WhereParams& p, int64_t i,
                                               const unsigned char* cond, const unsigned char* xs,
                                               const unsigned char* ys) {
  int64_t rest = i, c_off = 0, x_off = 0, y_off = 0;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    const int64_t c = rest % p.out_dims[d];
    rest /= p.out_dims[d];
    c_off += c * p.cond_strides[d];
    x_off += c * p.x_strides[d];
    y_off += c * p.y_strides[d];
  }
  return cond[c_off] != 0 ? xs + x_off * p.elem_bytes : ys + y_off * p.elem_bytes;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void where(const WhereParams& p, const unsigned char* cond, const void* x, const void* y,
           void* out);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/where.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A byte mover: any dtype.
#define JP_CUDA_VARIANTS_where(X, F) \
  X(F, jp_where, kAny, 0)
