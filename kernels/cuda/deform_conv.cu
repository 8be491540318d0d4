// DeformConv on the GPU: per image and group, the GEMM y[pixel, oc] = sum over k of A[pixel, k] *
// w[oc, k] on fp32_tile.cuh's 64x64 tiles (grid x: pixel tiles, y: output-channel tiles of the
// group, z: image * groups + group), where each A element is sampled as it is loaded
// (deform_conv_tap once per K element, deform_conv_sample per pixel: the offsets, the bilinear
// blend, the mask) and B is w's rows. FP32 FMAs in K
// order, the bias after: the twin's sums but for their rounding (fmaf against a product then a
// sum). x, offsets, mask, w, b and y of one dtype, Float32 or Float16 (converted on load, y
// rounded once).
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/fp32_tile.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/deform_conv.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void deform_conv_kernel(const StepPointers& ptrs, const DeformConvParams& p) {
  __shared__ F32Stage As, Bs;
  if (blockDim.x != kF32Threads) return;  // not its launch (an untrusted plan)
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* w = static_cast<const T*>(ptrs.in[1]);
  const T* offset = static_cast<const T*>(ptrs.in[2]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[3]) : nullptr;
  const T* mask = p.has_mask ? static_cast<const T*>(ptrs.in[p.has_bias ? 4 : 3]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  const T* tensors[3] = {x, offset, mask};
  const auto load = [&](int which, int64_t i) { return load_float(tensors[which], i); };
  const int64_t K = deform_conv_k(p), cout_g = p.out_channels / p.groups;
  const int64_t plane = p.out_h * p.out_w;
  const int64_t n = int64_t(blockIdx.z) / p.groups, g = int64_t(blockIdx.z) % p.groups;
  const int tid = int(threadIdx.x), kl = tid % kF32K, rq = tid / kF32K;
  const int64_t m0 = int64_t(blockIdx.x) * kF32Tile, o0 = int64_t(blockIdx.y) * kF32Tile;
  float acc[4][4] = {};
  f32_tile_k_loop(As, Bs, K, rq, kl, [&](int64_t k0) {
    const int64_t k = k0 + kl;
    const DeformConvTap tap = deform_conv_tap(p, g, k < K ? k : 0);  // once for four pixels
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int64_t m = m0 + rq + 16 * e, o = o0 + rq + 16 * e;
      As[kl][rq + 16 * e] = k < K && m < plane ? deform_conv_sample(p, load, n, m / p.out_w, m % p.out_w, tap) : 0.f;
      Bs[kl][rq + 16 * e] = k < K && o < cout_g ? load_float(w, (g * cout_g + o) * K + k) : 0.f;
    }
  }, acc);
  f32_tile_store(m0, o0, rq, kl, plane, cout_g, acc, [&](int64_t m, int64_t o, float v) {
    const int64_t oc = g * cout_g + o;
    if (bias != nullptr) v += load_float(bias, oc);
    store_float(y, (n * p.out_channels + oc) * plane + m, v);
  });
}

__device__ void deform_conv_f32(const StepPointers& ptrs, const DeformConvParams& p) {
  deform_conv_kernel<float>(ptrs, p);
}
__device__ void deform_conv_f16(const StepPointers& ptrs, const DeformConvParams& p) {
  deform_conv_kernel<__half>(ptrs, p);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_deform_conv_f32, DeformConvParams, jetplan::kernels::cuda::deform_conv_f32)
JP_STEP_KERNEL(jp_deform_conv_f16, DeformConvParams, jetplan::kernels::cuda::deform_conv_f16)
