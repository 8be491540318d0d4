// Softmax and log-softmax on the GPU, FP16 or FP32 storage with FP32 arithmetic. Rows along the
// last dim (inner == 1: classifier heads, ViT attention rows of 197) take one warp per row;
// other axes one thread per (outer, inner) column, reading along the axis with neighbouring
// threads on neighbouring columns. Reductions run in a fixed order (shuffle trees), so the same
// inputs give the same bits. masked_rows_zero: a row of -inf gives 0 (log: -inf), as the twin.
// Twin: kernels/cpu/softmax.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/softmax.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ __forceinline__ float finish(float shifted, float sum, float log_sum, bool log) {
  return log ? shifted - log_sum : __expf(shifted) / sum;
}

template <typename T>
__device__ void softmax_columns(const StepPointers& ptrs, const SoftmaxParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  if (p.axis < 1) return;
  const int64_t count = p.outer * p.inner;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t o = i / p.inner, in = i % p.inner;
    const int64_t base = o * p.axis * p.inner + in;
    float max = load_float(x, base);
    for (int64_t j = 1; j < p.axis; ++j) max = fmaxf(max, load_float(x, base + j * p.inner));
    if (p.masked_rows_zero && max == -INFINITY) {
      for (int64_t j = 0; j < p.axis; ++j)
        store_float(y, base + j * p.inner, p.log ? -INFINITY : 0.f);
      continue;
    }
    float sum = 0.f;
    for (int64_t j = 0; j < p.axis; ++j) sum += __expf(load_float(x, base + j * p.inner) - max);
    const float log_sum = __logf(sum);
    for (int64_t j = 0; j < p.axis; ++j) {
      const int64_t at = base + j * p.inner;
      store_float(y, at, finish(load_float(x, at) - max, sum, log_sum, p.log));
    }
  }
}

template <typename T>
__device__ void softmax_rows(const StepPointers& ptrs, const SoftmaxParams& p) {
  if (p.inner != 1 || blockDim.x % 32 != 0 || blockDim.y != 1 || blockDim.z != 1) {
    softmax_columns<T>(ptrs, p);  // a plan that named this kernel for another layout
    return;
  }
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  if (p.axis < 1) return;
  const int lane = threadIdx.x % 32;
  const int64_t warp = global_thread() / 32, warps = global_threads() / 32;
  for (int64_t row = warp; row < p.outer; row += warps) {
    const T* xr = x + row * p.axis;
    T* yr = y + row * p.axis;
    float max = -INFINITY;
    for (int64_t j = lane; j < p.axis; j += 32) max = fmaxf(max, load_float(xr, j));
    for (int s = 16; s > 0; s >>= 1) max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, s));
    if (p.masked_rows_zero && max == -INFINITY) {  // the whole warp agrees on max
      for (int64_t j = lane; j < p.axis; j += 32) store_float(yr, j, p.log ? -INFINITY : 0.f);
      continue;
    }
    float sum = 0.f;
    for (int64_t j = lane; j < p.axis; j += 32) sum += __expf(load_float(xr, j) - max);
    for (int s = 16; s > 0; s >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, s);
    const float log_sum = __logf(sum);
    for (int64_t j = lane; j < p.axis; j += 32)
      store_float(yr, j, finish(load_float(xr, j) - max, sum, log_sum, p.log));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_softmax, SoftmaxParams, jetplan::kernels::cuda::softmax_columns)
JP_HALF_AND_FLOAT_KERNELS(jp_softmax_rows, SoftmaxParams, jetplan::kernels::cuda::softmax_rows)
