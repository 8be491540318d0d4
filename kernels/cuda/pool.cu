// Max and average pooling on the GPU, FP16 and FP32, NCHW or NHWC (channels_last, what GPU plans
// use), 1 to 3 spatial dims, with the twin's window semantics exactly: taps in the padding are
// skipped by max and counted by average only with count_include_pad, taps past pad_end (a
// ceil-mode window) never count, a window without input gives 0 and a NaN in a max window wins.
// Global average pooling (one window over the whole input, no padding) has its own kernel: a
// parallel per-channel reduction in a fixed order. Twin: kernels/cpu/pool.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

// 1-D and 2-D pools as 3-D ones with leading extent-1 dims (as the twin does).
struct Geometry {
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
};

__device__ Geometry to_3d(const PoolParams& p) {
  Geometry g;
  const int lead = 3 - p.spatial_rank;
  for (int d = 0; d < 3; ++d) {
    const int s = d - lead;
    const bool real = s >= 0 && s < kMaxSpatial;
    g.in[d] = real ? p.in_size[s] : 1;
    g.out[d] = real ? p.out_size[s] : 1;
    g.kernel[d] = real ? p.kernel[s] : 1;
    g.stride[d] = real ? p.stride[s] : 1;
    g.dilation[d] = real ? p.dilation[s] : 1;
    g.pad_begin[d] = real ? p.pad_begin[s] : 0;
    g.pad_end[d] = real ? p.pad_end[s] : 0;
  }
  return g;
}

// One output element per thread; channels fastest in NHWC, so neighbouring threads read
// neighbouring channels of the same taps.
template <typename T>
__device__ void pool(const StepPointers& ptrs, const PoolParams& p) {
  if (p.spatial_rank < 1 || p.spatial_rank > 3) return;
  const Geometry g = to_3d(p);
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t C = p.channels;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t count = p.batch * C * out_plane;
  const bool is_max = p.kind == PoolKind::kMax;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t n, c, o;  // o: flat output position in the plane
    if (p.channels_last) {
      c = i % C;
      o = (i / C) % out_plane;
      n = i / (C * out_plane);
    } else {
      o = i % out_plane;
      c = (i / out_plane) % C;
      n = i / (out_plane * C);
    }
    const int64_t o2 = o % g.out[2], o1 = (o / g.out[2]) % g.out[1], o0 = o / (g.out[2] * g.out[1]);
    const T* xp = p.channels_last ? x + n * in_plane * C + c : x + (n * C + c) * in_plane;
    const int64_t step = p.channels_last ? C : 1;
    float max = 0.f, sum = 0.f;
    int64_t inputs = 0, counted = 0;
    const int64_t b0 = o0 * g.stride[0] - g.pad_begin[0], b1 = o1 * g.stride[1] - g.pad_begin[1],
                  b2 = o2 * g.stride[2] - g.pad_begin[2];
    for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
      const int64_t i0 = b0 + k0 * g.dilation[0];
      if (i0 < -g.pad_begin[0] || i0 >= g.in[0] + g.pad_end[0]) continue;
      for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
        const int64_t i1 = b1 + k1 * g.dilation[1];
        if (i1 < -g.pad_begin[1] || i1 >= g.in[1] + g.pad_end[1]) continue;
        for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
          const int64_t i2 = b2 + k2 * g.dilation[2];
          if (i2 < -g.pad_begin[2] || i2 >= g.in[2] + g.pad_end[2]) continue;
          ++counted;
          if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2])
            continue;
          const float v = load_float(xp, ((i0 * g.in[1] + i1) * g.in[2] + i2) * step);
          if (inputs == 0 || v > max || v != v) max = v;
          sum += v;
          ++inputs;
        }
      }
    }
    const int64_t divisor = p.count_include_pad ? counted : inputs;
    float result = 0.f;
    if (is_max) result = max;
    else if (divisor > 0) result = sum / static_cast<float>(divisor);
    store_float(y, i, result);
  }
}

constexpr int kGapLanes = 32;  // channels per block
constexpr int kGapRows = 8;    // partial sums per channel

// Global average pooling, NHWC: block (32 channels) x (8 rows); row r sums positions r, r + 8,
// ... of its channel, then row 0 adds the 8 partial sums in row order: the same order, so the
// same bits, for every launch. Grid-stride over (n, 32-channel tile).
template <typename T>
__device__ void global_average_nhwc(const StepPointers& ptrs, const PoolParams& p) {
  __shared__ float partial[kGapRows][kGapLanes];
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  int64_t spatial = 1;
  for (int d = 0; d < p.spatial_rank && d < kMaxSpatial; ++d) spatial *= p.in_size[d];
  const int64_t C = p.channels;
  const int64_t tiles_per_n = (C + kGapLanes - 1) / kGapLanes;
  const int lane = threadIdx.x, row = threadIdx.y;
  for (int64_t t = blockIdx.x; t < p.batch * tiles_per_n; t += gridDim.x) {
    const int64_t n = t / tiles_per_n, c = (t % tiles_per_n) * kGapLanes + lane;
    float sum = 0.f;
    if (c < C) {
      const T* xp = x + n * spatial * C + c;
      for (int64_t s = row; s < spatial; s += kGapRows) sum += load_float(xp, s * C);
    }
    partial[row][lane] = sum;
    __syncthreads();
    if (row == 0 && c < C) {
      float total = 0.f;
      for (int r = 0; r < kGapRows; ++r) total += partial[r][lane];
      store_float(y, n * C + c, spatial > 0 ? total / static_cast<float>(spatial) : 0.f);
    }
    __syncthreads();
  }
}

template <typename T>
__device__ void global_average(const StepPointers& ptrs, const PoolParams& p) {
  // The selector names this kernel only for an NHWC global average; for anything else (a plan
  // written by hand) the general kernel gives the same answer.
  bool global = p.kind == PoolKind::kAverage && p.channels_last && blockDim.x == kGapLanes &&
                blockDim.y == kGapRows && blockDim.z == 1 && p.spatial_rank >= 1 &&
                p.spatial_rank <= kMaxSpatial;
  for (int d = 0; global && d < p.spatial_rank; ++d)
    global = p.out_size[d] == 1 && p.kernel[d] == p.in_size[d] && p.pad_begin[d] == 0 &&
             p.pad_end[d] == 0 && p.dilation[d] == 1;
  if (global) global_average_nhwc<T>(ptrs, p);
  else pool<T>(ptrs, p);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::PoolParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void jp_pool_f16(StepPointers ptrs, const PoolParams p) {
  jetplan::kernels::cuda::pool<__half>(ptrs, p);
}
extern "C" __global__ void jp_pool_f32(StepPointers ptrs, const PoolParams p) {
  jetplan::kernels::cuda::pool<float>(ptrs, p);
}
extern "C" __global__ void jp_pool_global_avg_f16(StepPointers ptrs, const PoolParams p) {
  jetplan::kernels::cuda::global_average<__half>(ptrs, p);
}
extern "C" __global__ void jp_pool_global_avg_f32(StepPointers ptrs, const PoolParams p) {
  jetplan::kernels::cuda::global_average<float>(ptrs, p);
}
