// Device-side helpers shared by the CUDA kernel families: FP16 load/store and grid-stride loops.
// Shared with the CPU twins: the scalar op formulas (activations, Binary, Unary, Elementwise) of
// kernels/scalar_ops.h, and the dense element counts and broadcast offsets of
// kernels/dense_index.h.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/activation_function.h"
#include "kernels/dense_index.h"
#include "kernels/scalar_ops.h"

namespace jetplan::kernels::cuda {

// ------------------------------------------------------------- early (programmatic) launches
// A variant whose row sets early_launch (variants.h) may start while the previous kernel on the
// stream is still running (sm_90+, programmatic dependent launch): its launch and its reads of
// the weights overlap that kernel's tail. pdl_wait() blocks until the previous kernel has
// finished and its writes are visible: call it before the first read or write of any step
// tensor or workspace (weights, written once at load, may be read before it), on every path,
// early returns included (a kernel that finished without waiting would let the next one run
// ahead of the one before it). pdl_trigger() lets the next kernel launch once every block of
// this one has called it (so all of them are on the GPU already: the next one's blocks take
// only what is left, and wait): call it right after pdl_wait(), never before (then at most two
// kernels overlap, the newer one waiting). Without sm_90 both compile to nothing, and on a plain
// launch the wait returns at once.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// ------------------------------------------------------------- activations of fused epilogues
// activation_value() inlined where a kernel applies it to many elements brings every
// activation's formula (erff, tanhf, ...) once per element into the kernel's code: hundreds of
// KB of SASS that miss the instruction cache on every short tile. with_activation() instead
// calls body(ActKind<A>{}) once, A being the step's activation kind at compile time for the
// common ones (None, Relu, Clip; with EXTENDED also Gelu, of the MLPs of transformers and
// ConvNeXt) and -1 for the rest, and act_value<A>() computes it: inlined and branch-free for a
// known kind, through one shared out-of-line activation_value() otherwise. The formulas, and so
// the bits, are activation_value()'s either way. An out-of-line call per element cost the
// ConvNeXt-T MLP convs (K of 96 to 384) most of their time: ncu counted 5.1K instructions a
// warp in the 128x128 tile of the 96 -> 384 GELU conv, 128 of them mma (EpilogueF16Gelu in
// conv_epilogue.cuh says where Gelu is inlined, and why not everywhere).
template <int A>
struct ActKind {
  static constexpr int value = A;
};
__device__ __noinline__ inline float activation_out_of_line(Activation act, float x) {
  return activation_value(act, x);
}
template <int A>
__device__ __forceinline__ float act_value(const Activation& act, float x) {
  if constexpr (A < 0) {
    return activation_out_of_line(act, x);
  } else {
    return activation_value(Activation{ActivationKind(A), act.alpha, act.beta}, x);
  }
}
template <bool EXTENDED = false, typename Body>
__device__ __forceinline__ void with_activation(const Activation& act, Body body) {
  switch (act.kind) {
    case ActivationKind::kNone: body(ActKind<int(ActivationKind::kNone)>{}); break;
    case ActivationKind::kRelu: body(ActKind<int(ActivationKind::kRelu)>{}); break;
    case ActivationKind::kClip: body(ActKind<int(ActivationKind::kClip)>{}); break;
    case ActivationKind::kGelu:
      if constexpr (EXTENDED) {
        body(ActKind<int(ActivationKind::kGelu)>{});
        break;
      }
      [[fallthrough]];  // one out-of-line body: a second copy of it cost the 3x3 depthwise
                        // kernel 9 registers and a CTA an SM (MobileNetV2 10% slower, H200)
    default: body(ActKind<-1>{}); break;
  }
}
// Whether A is one of the kinds only with_activation<true> gives.
template <int A>
inline constexpr bool kExtendedActivation = A == int(ActivationKind::kGelu);

// The dynamic shared memory of this launch, in bytes (kernels that size their use by the
// params check the launch gives them enough: a plan is untrusted).
__device__ __forceinline__ uint32_t dynamic_smem_bytes() {
  uint32_t r;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(r));
  return r;
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

// Eight halves as floats from q, aligned to 16 bytes: one 16-byte load.
__device__ __forceinline__ void load8(const __half* q, float (&v)[8]) {
  const uint4 r = *reinterpret_cast<const uint4*>(q);
  const __half2* h = reinterpret_cast<const __half2*>(&r);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float2 f = __half22float2(h[e]);
    v[2 * e] = f.x, v[2 * e + 1] = f.y;
  }
}

// Eight values stored at once where q allows: as halves (rounded to nearest even) in one
// 16-byte store, or as Int8 in one 8-byte store, where q is aligned to that; else one by one.
__device__ __forceinline__ void store8(__half* q, const float (&v)[8]) {
  __align__(16) __half h[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) h[e] = __float2half_rn(v[e]);
  if (reinterpret_cast<uintptr_t>(q) % 16 == 0) {
    *reinterpret_cast<uint4*>(q) = *reinterpret_cast<const uint4*>(h);
    return;
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) q[e] = h[e];
}
__device__ __forceinline__ void store8(int8_t* q, const int8_t (&v)[8]) {
  if (reinterpret_cast<uintptr_t>(q) % 8 == 0) {
    *reinterpret_cast<uint2*>(q) = *reinterpret_cast<const uint2*>(v);
    return;
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) q[e] = v[e];
}

__device__ __forceinline__ int64_t global_thread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t global_threads() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Where element (or unit) i of the dense result goes in y, in the caller's units and index type:
// blocks of yb, ys apart from yo (the params' y_block: a Concat written in place); i itself
// where y is dense. kernels/dense_index.h y_index() is the same in elements and 64 bits.
template <typename I>
struct YPlace {
  bool blocks;
  I yb, ys, yo;
  __device__ __forceinline__ I at(I i) const {
    if (!blocks) return i;
    const I b = i / yb;
    return yo + b * ys + (i - b * yb);
  }
};

}  // namespace jetplan::kernels::cuda

// A family kernel of one variant: extern "C" `name` of the signature kernels/cuda/launch.h
// describes, running fn (qualified).
#define JP_STEP_KERNEL(name, Params, fn)                                      \
  extern "C" __global__ void name(jetplan::kernels::cuda::StepPointers ptrs, \
                                  const jetplan::kernels::Params p) {       \
    jetplan::kernels::cuda::pdl_wait();                                      \
    jetplan::kernels::cuda::pdl_trigger();                                   \
    fn(ptrs, p);                                                             \
  }

// A family kernel's Float16 and Float32 variants: extern "C" name##_f16 and name##_f32 of the
// signature kernels/cuda/launch.h describes, running fn<__half> and fn<float> (fn qualified).
#define JP_HALF_AND_FLOAT_KERNELS(name, Params, fn)                                \
  extern "C" __global__ void name##_f16(jetplan::kernels::cuda::StepPointers ptrs, \
                                        const jetplan::kernels::Params p) {       \
    jetplan::kernels::cuda::pdl_wait();                                            \
    jetplan::kernels::cuda::pdl_trigger();                                         \
    fn<__half>(ptrs, p);                                                           \
  }                                                                                \
  extern "C" __global__ void name##_f32(jetplan::kernels::cuda::StepPointers ptrs, \
                                        const jetplan::kernels::Params p) {       \
    jetplan::kernels::cuda::pdl_wait();                                            \
    jetplan::kernels::cuda::pdl_trigger();                                         \
    fn<float>(ptrs, p);                                                            \
  }
