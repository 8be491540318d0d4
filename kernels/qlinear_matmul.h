// The QLinearMatMul family: parameters and CPU twin (kernels/cpu/qlinear_matmul.cc); CUDA kernel
// in kernels/cuda/qlinear_matmul.cu.
// Quantized tensors are DType::kInt8 or DType::kUInt8 (passed as void*, read as the params' DType);
// a zero point has its tensor's type and a scale is float32. Rounding is half to even and every
// conversion to a quantized type saturates (kernels/quantization.h).
#pragma once

#include <cstdint>

#include "kernels/dtype.h"

namespace jetplan::kernels {

// For i in [0, batch): y[i] (M x N) = requantize(sum_k (A[i][m][k] - a_zp) * (B[i][k][n] - b_zp))
// A[i] is [M, K] row-major at a + i * a_batch_stride, B[i] is [K, N] at b + i * b_batch_stride
// (stride 0 broadcasts one matrix to every batch), y is [batch, M, N] dense. The sum is ONNX's
// int32 accumulator (it wraps modulo 2^32, as int32 arithmetic does). requantize of an
// accumulator for row m, column n is saturate(round_half_even(acc * multiplier) + y_zp) with
// multiplier = a_scale[m] * b_scale[n] / y_scale evaluated in double; a_scale and a_zp have M
// entries when a_per_row (else one), b_scale and b_zp N entries when b_per_column (else one).
struct QLinearMatMulParams {
  int64_t batch = 1;
  int64_t M = 0, N = 0, K = 0;
  int64_t a_batch_stride = 0;
  int64_t b_batch_stride = 0;
  DType a_type = DType::kUInt8;
  DType b_type = DType::kUInt8;
  DType y_type = DType::kUInt8;
  bool a_per_row = false;
  bool b_per_column = false;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// Arguments in ONNX's input order, then y. Every scale and zero point is required.
void qlinear_matmul(const QLinearMatMulParams& p, const void* a, const float* a_scale,
                    const void* a_zero_point, const void* b, const float* b_scale,
                    const void* b_zero_point, const float* y_scale, const void* y_zero_point,
                    void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/qlinear_matmul.cu (columns: kernels/cuda/variants.h,
// JP_CUDA_VARIANT_COLUMNS): one thread per output element, the twin's exact integer sum and
// double requantization (bit for bit); the element types from the params (Int8 or UInt8 each).
#define JP_CUDA_VARIANTS_qlinear_matmul(X, F) X(F, jp_qlinear_matmul, kAny, 0)
