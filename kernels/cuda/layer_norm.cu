// LayerNorm (statistics over the last `inner` elements of each row) on the GPU, FP16 or FP32
// storage, every tensor of the step in that dtype, FP32 arithmetic. Statistics are two-pass (mean,
// then the mean of squared deviations) with block reductions in a fixed order. Twin:
// kernels/cpu/layer_norm.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/layer_norm.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kNormThreads = 256;

// Sum over the block, the same tree every time; every thread gets the total.
__device__ float block_sum(float v, float* shared) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int w = 0; w < kNormThreads / 32; ++w) total += shared[w];
  __syncthreads();  // shared is reused by the next call
  return total;
}

// One block of 256 threads per row, rows grid-stride. Within a row each thread takes elements
// tid, tid + 256, ...; the row is read three times (mean, deviations, output), from L1/L2 after
// the first for rows of ViT size.
template <typename T>
__device__ void layer_norm(const StepPointers& ptrs, const LayerNormParams& p) {
  __shared__ float shared[kNormThreads / 32];
  if (blockDim.x != kNormThreads || blockDim.y != 1 || blockDim.z != 1 || p.inner < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* scale = static_cast<const T*>(ptrs.in[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[2]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  const float n = static_cast<float>(p.inner);
  for (int64_t row = blockIdx.x; row < p.outer; row += gridDim.x) {
    const T* xr = x + row * p.inner;
    T* yr = y + row * p.inner;
    float s = 0.f;
    for (int64_t i = threadIdx.x; i < p.inner; i += kNormThreads) s += load_float(xr, i);
    const float mean = block_sum(s, shared) / n;
    float sq = 0.f;
    for (int64_t i = threadIdx.x; i < p.inner; i += kNormThreads) {
      const float d = load_float(xr, i) - mean;
      sq += d * d;
    }
    const float inv_std = rsqrtf(block_sum(sq, shared) / n + p.epsilon);
    for (int64_t i = threadIdx.x; i < p.inner; i += kNormThreads) {
      float v = load_float(scale, i) * ((load_float(xr, i) - mean) * inv_std);
      if (bias != nullptr) v += load_float(bias, i);
      store_float(yr, i, activation_value(p.act, v));
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_layer_norm, LayerNormParams, jetplan::kernels::cuda::layer_norm)
