// What the normalization kernels share (LayerNorm, InstanceNorm, GroupNorm): a block of 256
// threads normalizes one row of contiguous elements, statistics in FP32, two passes (mean, then
// the mean of squared deviations: no E[x^2] - E[x]^2 cancellation) with block reductions in a
// fixed order, so the same inputs give the same bits.
#pragma once

#include "kernels/cuda/device_math.cuh"

namespace jetplan::kernels::cuda {

constexpr int kNormThreads = 256;

// Sum over the block, the same tree every time; every thread gets the total. shared: 8 floats.
__device__ __forceinline__ float block_sum(float v, float* shared) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kNormThreads / 32; ++w) total += shared[w];
  __syncthreads();  // shared is reused by the next call
  return total;
}

// y[i] = act(scale * (x[i] - mean) / sqrt(var + epsilon) + bias) over one row of `count`
// elements, (scale, bias) of element i from affine(i) as a float2, each result given to
// store(i, value). Every thread of the block calls it for the same row. The row is read three
// times (mean, deviations, output), from L1/L2 after the first for rows that fit there. rms
// (RMSNormalization): the mean is taken as 0 and its pass skipped, so the deviations are x
// itself. Returns the row's (mean, inv_std), the same in every thread.
template <typename T, typename Affine, typename Store>
__device__ __forceinline__ float2 normalize_row_to(const T* x, int64_t count, float epsilon,
                                                   const Activation& act, float* shared,
                                                   Affine affine, Store store, bool rms = false) {
  const float n = static_cast<float>(count);
  float mean = 0.f;
  if (!rms) {
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < count; i += kNormThreads) s += load_float(x, i);
    mean = block_sum(s, shared) / n;
  }
  float sq = 0.f;
  for (int64_t i = threadIdx.x; i < count; i += kNormThreads) {
    const float d = load_float(x, i) - mean;
    sq += d * d;
  }
  const float inv_std = rsqrtf(block_sum(sq, shared) / n + epsilon);
  for (int64_t i = threadIdx.x; i < count; i += kNormThreads) {
    const float2 ab = affine(i);
    store(i, activation_value(act, ab.x * ((load_float(x, i) - mean) * inv_std) + ab.y));
  }
  return make_float2(mean, inv_std);
}

// normalize_row_to storing into y, of x's type.
template <typename T, typename Affine>
__device__ __forceinline__ float2 normalize_row(const T* x, T* y, int64_t count, float epsilon,
                                              const Activation& act, float* shared,
                                              Affine affine, bool rms = false) {
  return normalize_row_to(
      x, count, epsilon, act, shared, affine, [y](int64_t i, float v) { store_float(y, i, v); },
      rms);
}

// A block shape other than kNormThreads x 1 x 1 (an untrusted plan): the kernel does nothing.
__device__ __forceinline__ bool norm_block_ok() {
  return blockDim.x == kNormThreads && blockDim.y == 1 && blockDim.z == 1;
}

}  // namespace jetplan::kernels::cuda
