// LayerNorm (statistics over the last `inner` elements of each row) on the GPU, FP16 or FP32
// storage, every tensor of the step in that dtype, FP32 arithmetic. Statistics are two-pass (mean,
// then the mean of squared deviations) with block reductions in a fixed order; RMS steps skip the
// mean (normalize_row's rms); the optional mean and inv_std_dev outputs in the step's dtype. FP16
// rows of 8k elements up to 256 take a group of lanes a row (jp_layer_norm_warp_f16). The _q8
// kernels write Int8 instead (an INT8 plan's LayerNorm in front of an INT8 GEMM): each value the
// float kernel would store, rounded by int8_quantize with the step's inverse scale. Twin:
// kernels/cpu/layer_norm.cc.
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/norm_rows.cuh"
#include "kernels/int8_epilogue.h"
#include "kernels/layer_norm.h"

namespace jetplan::kernels::cuda {
namespace {

// One block of 256 threads per row, rows grid-stride. Within a row each thread takes elements
// tid, tid + 256, ...; the row is read three times (mean, deviations, output), from L1/L2 after
// the first for rows of ViT size. Thread 0 writes the row's mean and inv_std_dev where the step
// has those outputs (p.mean_output, p.inv_std_output).
template <typename T, typename Y = T>
__device__ void layer_norm(const StepPointers& ptrs, const LayerNormParams& p) {
  __shared__ float shared[kNormThreads / 32];
  if (!norm_block_ok() || p.inner < 1) return;
  constexpr bool kToInt8 = std::is_same_v<Y, int8_t>;
  if (kToInt8 != layer_norm_to_int8(p) || p.inv_scale_input >= kMaxStepInputs) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* scale = static_cast<const T*>(ptrs.in[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[2]) : nullptr;
  Y* y = static_cast<Y*>(ptrs.out[0]);
  const float inv_y = kToInt8 ? *static_cast<const float*>(ptrs.in[p.inv_scale_input]) : 0.f;
  const auto stat = [&](int32_t index) -> T* {
    return index > 0 && index < kMaxStepOutputs ? static_cast<T*>(ptrs.out[index]) : nullptr;
  };
  T* mean = stat(p.mean_output);
  T* inv_std = stat(p.inv_std_output);
  for (int64_t row = blockIdx.x; row < p.outer; row += gridDim.x) {
    Y* yr = y + row * p.inner;
    const float2 m = normalize_row_to(
        x + row * p.inner, p.inner, p.epsilon, p.act, shared,
        [&](int64_t i) {
          return make_float2(load_float(scale, i), bias != nullptr ? load_float(bias, i) : 0.f);
        },
        [&](int64_t i, float v) {
          if constexpr (kToInt8)
            yr[i] = int8_quantize(v, inv_y);
          else
            store_float(yr, i, v);
        },
        p.rms);
    if (threadIdx.x != 0) continue;
    if (mean != nullptr) store_float(mean, row, m.x);
    if (inv_std != nullptr) store_float(inv_std, row, m.y);
  }
}

// Eight halves of a row at element e as floats: one 16-byte load where the row allows (vec).
__device__ __forceinline__ void load_half8(const __half* q, bool vec, float (&v)[8]) {
  if (vec) {
    load8(q, v);
    return;
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = __half2float(q[e]);
}

// The sum over the L lanes of each group of L (a power of 2 up to 32) within the warp; every lane
// of the warp takes part, each group gets its own total, in a fixed order.
template <int L>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int s = L / 2; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
  return v;
}

// Rows of 8k elements up to 256 (layer_norm_warp_fits: ConvNeXt's channels-last LayerNorms over
// 96 and 192 channels, where a block a row leaves most of its threads idle): L lanes a row (the
// power of 2 that covers its 16-byte chunks, one a lane), 32 / L rows a warp; the row read once
// into registers, the block form's two passes over them with group reductions (a fixed order:
// the same inputs give the same bits), 16-byte stores. Warps stride over the rows, every lane
// to the end (the reductions need the whole warp).
template <int L, typename Y>
__device__ void layer_norm_rows(const StepPointers& ptrs, const LayerNormParams& p) {
  constexpr bool kToInt8 = std::is_same_v<Y, int8_t>;
  const __half* x = static_cast<const __half*>(ptrs.in[0]);
  const __half* scale = static_cast<const __half*>(ptrs.in[1]);
  const __half* bias = p.has_bias ? static_cast<const __half*>(ptrs.in[2]) : nullptr;
  Y* y = static_cast<Y*>(ptrs.out[0]);
  const float inv_y = kToInt8 ? *static_cast<const float*>(ptrs.in[p.inv_scale_input]) : 0.f;
  const auto aligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
  // (store8 checks y's alignment itself)
  const bool vec = aligned(x) && aligned(scale) && (bias == nullptr || aligned(bias));
  constexpr int kRows = 32 / L;  // rows a warp
  const int inner = int(p.inner), e = (threadIdx.x % L) * 8;
  const float n = float(inner);
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x / 32);
  for (int64_t base = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32 * kRows;
       base < p.outer; base += warps * kRows) {
    const int64_t row = base + threadIdx.x % 32 / L;
    const bool in = row < p.outer && e < inner;
    float v[8];
    float s = 0.f;
    if (in) load_half8(x + row * inner + e, vec, v);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (!in) v[k] = 0.f;
      s += v[k];
    }
    const float mean = p.rms ? 0.f : group_sum<L>(s) / n;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float d = v[k] - mean;
      sq += in ? d * d : 0.f;
    }
    const float inv_std = rsqrtf(group_sum<L>(sq) / n + p.epsilon);
    if (!in) continue;
    float a[8], b[8], o[8];
    load_half8(scale + e, vec, a);
    if (bias != nullptr) load_half8(bias + e, vec, b);
#pragma unroll
    for (int k = 0; k < 8; ++k)
      o[k] = activation_value(p.act, a[k] * ((v[k] - mean) * inv_std) +
                                         (bias != nullptr ? b[k] : 0.f));
    if constexpr (kToInt8) {
      int8_t q[8];
#pragma unroll
      for (int k = 0; k < 8; ++k) q[k] = int8_quantize(o[k], inv_y);
      store8(y + row * inner + e, q);
    } else {
      store8(y + row * inner + e, o);
    }
  }
}

template <typename Y>
__device__ void layer_norm_warp(const StepPointers& ptrs, const LayerNormParams& p) {
  if (!layer_norm_warp_fits(p) || blockDim.x % 32 != 0 || blockDim.y != 1 || blockDim.z != 1)
    return;  // not a step this kernel fits (an untrusted plan)
  if (std::is_same_v<Y, int8_t> != layer_norm_to_int8(p) || p.inv_scale_input >= kMaxStepInputs)
    return;
  const int64_t chunks = p.inner / 8;
  if (chunks <= 4) layer_norm_rows<4, Y>(ptrs, p);
  else if (chunks <= 8) layer_norm_rows<8, Y>(ptrs, p);
  else if (chunks <= 16) layer_norm_rows<16, Y>(ptrs, p);
  else layer_norm_rows<32, Y>(ptrs, p);
}
__device__ void layer_norm_warp_f16(const StepPointers& ptrs, const LayerNormParams& p) {
  layer_norm_warp<__half>(ptrs, p);
}
__device__ void layer_norm_warp_q8(const StepPointers& ptrs, const LayerNormParams& p) {
  layer_norm_warp<int8_t>(ptrs, p);
}
template <typename T>
__device__ void layer_norm_q8(const StepPointers& ptrs, const LayerNormParams& p) {
  layer_norm<T, int8_t>(ptrs, p);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_layer_norm, LayerNormParams, jetplan::kernels::cuda::layer_norm)
JP_STEP_KERNEL(jp_layer_norm_warp_f16, LayerNormParams, jetplan::kernels::cuda::layer_norm_warp_f16)
JP_HALF_AND_FLOAT_KERNELS(jp_layer_norm_q8, LayerNormParams, jetplan::kernels::cuda::layer_norm_q8)
JP_STEP_KERNEL(jp_layer_norm_warp_q8_f16, LayerNormParams,
               jetplan::kernels::cuda::layer_norm_warp_q8)
