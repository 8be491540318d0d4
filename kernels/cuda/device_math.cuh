// Device-side helpers shared by the CUDA kernel families: the activation functions (the twins of
// kernels/cpu/activation.cc, in FP32), FP16 load/store and grid-stride loops.
#pragma once

#include <cuda_fp16.h>

#include "kernels/params.h"

namespace jetplan::kernels::cuda {

__device__ __forceinline__ float apply_activation(const Activation& act, float x) {
  switch (act.kind) {
    case ActivationKind::kNone: return x;
    case ActivationKind::kRelu: return x > 0.f ? x : 0.f;
    case ActivationKind::kClip: return fminf(fmaxf(x, act.alpha), act.beta);
    case ActivationKind::kLeakyRelu: return x < 0.f ? act.alpha * x : x;
    case ActivationKind::kSigmoid: return 1.f / (1.f + __expf(-x));
    case ActivationKind::kTanh: return tanhf(x);
    case ActivationKind::kHardSigmoid: return fmaxf(0.f, fminf(1.f, act.alpha * x + act.beta));
    case ActivationKind::kHardSwish: return x * fmaxf(0.f, fminf(1.f, x * (1.f / 6.f) + 0.5f));
    case ActivationKind::kSilu: return x / (1.f + __expf(-x));
    case ActivationKind::kGelu: return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case ActivationKind::kElu: return x < 0.f ? act.alpha * (__expf(x) - 1.f) : x;
    case ActivationKind::kSelu:
      return x > 0.f ? act.beta * x : act.beta * act.alpha * (__expf(x) - 1.f);
  }
  return x;
}

template <typename T>
__device__ __forceinline__ float load_float(const T* p, int64_t i);
template <>
__device__ __forceinline__ float load_float<float>(const float* p, int64_t i) {
  return p[i];
}
template <>
__device__ __forceinline__ float load_float<__half>(const __half* p, int64_t i) {
  return __half2float(p[i]);
}

template <typename T>
__device__ __forceinline__ void store_float(T* p, int64_t i, float v);
template <>
__device__ __forceinline__ void store_float<float>(float* p, int64_t i, float v) {
  p[i] = v;
}
template <>
__device__ __forceinline__ void store_float<__half>(__half* p, int64_t i, float v) {
  p[i] = __float2half_rn(v);
}

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t global_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace jetplan::kernels::cuda
