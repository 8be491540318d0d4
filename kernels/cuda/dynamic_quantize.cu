// DynamicQuantizeLinear on the GPU: one block of 1024 threads finds the range of x (min and max
// are exact, so any order gives the twin's), thread 0 computes the scale and zero point with the
// twin's float operations, and every thread quantizes its elements with them: IEEE division and
// round half to even (rintf), NaN to the zero point, saturation to [0, 255], so the bits agree
// with kernels/cpu/dynamic_quantize.cc. x Float32 or Float16 (its values in float, exactly).
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/dynamic_quantize.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kThreads = 1024;

template <typename T>
__device__ void dynamic_quantize(const StepPointers& ptrs, const DynamicQuantizeParams& p) {
  if (blockDim.x != kThreads || blockDim.y != 1 || blockDim.z != 1 || blockIdx.x != 0) return;
  __shared__ float lows[kThreads / 32], highs[kThreads / 32];
  __shared__ float scale_zp[2];
  const T* x = static_cast<const T*>(ptrs.in[0]);
  uint8_t* y = static_cast<uint8_t*>(ptrs.out[0]);
  float lo = 0.f, hi = 0.f;  // the range always holds 0; a NaN compares false and is left out
  for (int64_t i = threadIdx.x; i < p.count; i += kThreads) {
    const float v = load_float(x, i);
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  for (int s = 16; s > 0; s >>= 1) {
    lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, s));
    hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, s));
  }
  if (threadIdx.x % 32 == 0) {
    lows[threadIdx.x / 32] = lo;
    highs[threadIdx.x / 32] = hi;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) {
      lo = fminf(lo, lows[w]);
      hi = fmaxf(hi, highs[w]);
    }
    const float scale = __fdiv_rn(hi == lo ? 1.f : hi - lo, 255.f);
    float zp = 0.f - __fdiv_rn(lo, scale);
    zp = zp < 0.f ? 0.f : (zp > 255.f ? 255.f : zp);
    zp = rintf(zp);
    scale_zp[0] = scale;
    scale_zp[1] = zp;
    *static_cast<float*>(ptrs.out[1]) = scale;
    *static_cast<uint8_t*>(ptrs.out[2]) = static_cast<uint8_t>(zp);
  }
  __syncthreads();
  const float scale = scale_zp[0], zp = scale_zp[1];
  for (int64_t i = threadIdx.x; i < p.count; i += kThreads) {
    float r = rintf(__fdiv_rn(load_float(x, i), scale));
    if (r != r) r = 0.f;  // NaN: the zero point
    // |r| past 2^24 rounds when zp is added, but saturates the same way.
    const float q = r + zp;
    y[i] = static_cast<uint8_t>(q < 0.f ? 0.f : (q > 255.f ? 255.f : q));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_dynamic_quantize, DynamicQuantizeParams,
                          jetplan::kernels::cuda::dynamic_quantize)
