// Max and average pooling on the GPU, FP16 and FP32 (and Max of Int8), NCHW or NHWC (channels_last, what GPU plans
// use), 1 to 3 spatial dims, with the twin's window semantics exactly: taps in the padding are
// skipped by max and counted by average only with count_include_pad, taps past pad_end (a
// ceil-mode window) never count, a window without input gives 0 and a NaN in a max window wins.
// Global average pooling (one window over the whole input, no padding) has its own kernel: a
// parallel per-channel reduction in a fixed order. Twin: kernels/cpu/pool.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/pool.h"

namespace jetplan::kernels::cuda {
namespace {

using Geometry = PoolGeometry;

// The geometry in a kernel's index type I: 32-bit whenever every offset fits (fits_int32), as
// the divisions dominate the cost.
template <typename I>
struct IndexGeometry {
  I in[3], out[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
  __device__ explicit IndexGeometry(const Geometry& g) {
    for (int d = 0; d < 3; ++d) {
      in[d] = static_cast<I>(g.in[d]);
      out[d] = static_cast<I>(g.out[d]);
      kernel[d] = static_cast<I>(g.kernel[d]);
      stride[d] = static_cast<I>(g.stride[d]);
      dilation[d] = static_cast<I>(g.dilation[d]);
      pad_begin[d] = static_cast<I>(g.pad_begin[d]);
      pad_end[d] = static_cast<I>(g.pad_end[d]);
    }
  }
};

// Whether 32-bit indices reach every element and window coordinate (which reach pad and
// dilation past the input; 2^30 leaves room for them).
__device__ __forceinline__ bool fits_int32(const PoolParams& p, const Geometry& g) {
  const int64_t in_count = p.batch * p.channels * g.in[0] * g.in[1] * g.in[2];
  const int64_t out_count = p.batch * p.channels * g.out[0] * g.out[1] * g.out[2];
  const int64_t limit = int64_t{1} << 30;
  bool fits = in_count < limit && out_count < limit && global_threads() < limit;
  for (int d = 0; d < 3; ++d)
    fits = fits && g.kernel[d] * g.dilation[d] < limit && g.stride[d] * g.out[d] < limit &&
           g.pad_begin[d] < limit && g.pad_end[d] < limit;
  return fits;
}

// The window of output position (o0, o1, o2) in the twin's order: tap(position) for each tap
// inside the input (position: its index in the input plane). Returns how many taps count for
// count_include_pad: those inside the input or its padding, none past pad_end (a ceil-mode
// window).
template <typename I, typename Tap>
__device__ __forceinline__ I visit_window(const IndexGeometry<I>& g, I o0, I o1, I o2, Tap tap) {
  I counted = 0;
  const I b0 = o0 * g.stride[0] - g.pad_begin[0], b1 = o1 * g.stride[1] - g.pad_begin[1],
          b2 = o2 * g.stride[2] - g.pad_begin[2];
  for (I k0 = 0; k0 < g.kernel[0]; ++k0) {
    const I i0 = b0 + k0 * g.dilation[0];
    if (i0 < -g.pad_begin[0] || i0 >= g.in[0] + g.pad_end[0]) continue;
    for (I k1 = 0; k1 < g.kernel[1]; ++k1) {
      const I i1 = b1 + k1 * g.dilation[1];
      if (i1 < -g.pad_begin[1] || i1 >= g.in[1] + g.pad_end[1]) continue;
      for (I k2 = 0; k2 < g.kernel[2]; ++k2) {
        const I i2 = b2 + k2 * g.dilation[2];
        if (i2 < -g.pad_begin[2] || i2 >= g.in[2] + g.pad_end[2]) continue;
        ++counted;
        if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 || i2 >= g.in[2])
          continue;
        tap((i0 * g.in[1] + i1) * g.in[2] + i2);
      }
    }
  }
  return counted;
}

// One output element per thread; channels fastest in NHWC, so neighbouring threads read
// neighbouring channels of the same taps.
// I: the index type, 32-bit whenever every offset fits (the divisions dominate the cost).
template <typename T, typename I>
__device__ void pool_indexed(const StepPointers& ptrs, const PoolParams& p, const Geometry& geo) {
  const IndexGeometry<I> g(geo);
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const I C = static_cast<I>(p.channels);
  const I in_plane = g.in[0] * g.in[1] * g.in[2];
  const I out_plane = g.out[0] * g.out[1] * g.out[2];
  const I count = static_cast<I>(p.batch) * C * out_plane;
  const bool is_max = p.kind == PoolKind::kMax;
  for (I i = static_cast<I>(global_thread()); i < count; i += static_cast<I>(global_threads())) {
    I n, c, o;  // o: flat output position in the plane
    if (p.channels_last) {
      c = i % C;
      o = (i / C) % out_plane;
      n = i / (C * out_plane);
    } else {
      o = i % out_plane;
      c = (i / out_plane) % C;
      n = i / (out_plane * C);
    }
    const I o2 = o % g.out[2], o1 = (o / g.out[2]) % g.out[1], o0 = o / (g.out[2] * g.out[1]);
    const T* xp = p.channels_last ? x + n * in_plane * C + c : x + (n * C + c) * in_plane;
    const I step = p.channels_last ? C : 1;
    float max = 0.f, sum = 0.f;
    I inputs = 0, arg = 0;
    const I counted = visit_window(g, o0, o1, o2, [&](I position) {
      const float v = load_float(xp, position * step);
      if (inputs == 0 || v > max || v != v) {
        max = v;
        arg = position;
      }
      sum += v;
      ++inputs;
    });
    const I divisor = p.count_include_pad ? counted : inputs;
    float result = 0.f;
    if (is_max) result = max;
    else if (divisor > 0) result = sum / static_cast<float>(divisor);
    store_float(y, i, result);
    if (p.write_indices && !p.channels_last) {
      // The twin's MaxPool Indices: the flat NCHW offset of the element taken (the first of
      // equal ones; 0 for a window wholly in the padding), column-major within the plane for
      // storage_order 1.
      int64_t at = arg;
      if (p.indices_column_major) {
        const int64_t i2 = arg % g.in[2], i1 = arg / g.in[2] % g.in[1],
                      i0 = arg / (g.in[2] * g.in[1]);
        at = (i2 * int64_t{g.in[1]} + i1) * g.in[0] + i0;
      }
      static_cast<int64_t*>(ptrs.out[1])[i] = (int64_t{n} * C + c) * in_plane + at;
    }
  }
}

template <typename T>
__device__ void pool(const StepPointers& ptrs, const PoolParams& p) {
  if (p.spatial_rank < 1 || p.spatial_rank > 3) return;
  const Geometry g = pool_geometry_3d(p);
  if (fits_int32(p, g)) pool_indexed<T, int32_t>(ptrs, p, g);
  else pool_indexed<T, int64_t>(ptrs, p, g);
}

// NHWC FP16 with channels a multiple of 8 (every CNN stage): a thread pools 8 channels of one
// output position with 16-byte loads, so the index arithmetic is paid once per 8 channels.
// Falls back to the general kernel when the shape or the pointers do not allow it.
__device__ void pool_nhwc8(const StepPointers& ptrs, const PoolParams& p) {
  if (p.spatial_rank < 1 || p.spatial_rank > 3) return;
  const Geometry geo = pool_geometry_3d(p);
  const bool fits = p.channels_last && p.channels % 8 == 0 && p.channels > 0 &&
                    fits_int32(p, geo) && reinterpret_cast<uintptr_t>(ptrs.in[0]) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(ptrs.out[0]) % 16 == 0;
  if (!fits) {
    pool<__half>(ptrs, p);
    return;
  }
  const IndexGeometry<int32_t> g(geo);
  const uint4* x = static_cast<const uint4*>(ptrs.in[0]);
  uint4* y = static_cast<uint4*>(ptrs.out[0]);
  const int32_t groups = static_cast<int32_t>(p.channels / 8);  // 16-byte vectors per position
  const int32_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int32_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int32_t count = static_cast<int32_t>(p.batch) * out_plane * groups;
  const bool is_max = p.kind == PoolKind::kMax;
  for (int32_t i = static_cast<int32_t>(global_thread()); i < count;
       i += static_cast<int32_t>(global_threads())) {
    const int32_t cg = i % groups, o = (i / groups) % out_plane, n = i / (groups * out_plane);
    const int32_t o2 = o % g.out[2], o1 = (o / g.out[2]) % g.out[1],
                  o0 = o / (g.out[2] * g.out[1]);
    const uint4* xp = x + n * in_plane * groups + cg;
    float max[8], sum[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) max[k] = sum[k] = 0.f;
    int32_t inputs = 0;
    const int32_t counted = visit_window(g, o0, o1, o2, [&](int32_t position) {
      const uint4 raw = xp[position * groups];
      const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 v = __half22float2(h[k]);
        const float a = v.x, b = v.y;
        if (inputs == 0 || a > max[2 * k] || a != a) max[2 * k] = a;
        if (inputs == 0 || b > max[2 * k + 1] || b != b) max[2 * k + 1] = b;
        sum[2 * k] += a;
        sum[2 * k + 1] += b;
      }
      ++inputs;
    });
    const int32_t divisor = p.count_include_pad ? counted : inputs;
    uint4 out;
    __half2* oh = reinterpret_cast<__half2*>(&out);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      float a = 0.f, b = 0.f;
      if (is_max) {
        a = max[2 * k];
        b = max[2 * k + 1];
      } else if (divisor > 0) {
        a = sum[2 * k] / static_cast<float>(divisor);
        b = sum[2 * k + 1] / static_cast<float>(divisor);
      }
      oh[k] = __floats2half2_rn(a, b);
    }
    y[i] = out;
  }
}

// Max of Int8 (an INT8 plan's max pools between INT8 convs; the twin is max_pool_int8): one
// output position's 16 channels a thread (a 16-byte vector, four __vmaxs4 a tap) where NHWC
// channels % 16 == 0 and the pointers allow, else one element a thread. Max is exact in any
// order, and the window rules are visit_window()'s; a window without input gives 0.
template <int V>
__device__ void max_pool_i8_vec(const StepPointers& ptrs, const PoolParams& p, const Geometry& geo) {
  const IndexGeometry<int32_t> g(geo);
  const int8_t* x = static_cast<const int8_t*>(ptrs.in[0]);
  int8_t* y = static_cast<int8_t*>(ptrs.out[0]);
  const int32_t C = static_cast<int32_t>(p.channels), groups = C / V;
  const int32_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int32_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const int32_t count = static_cast<int32_t>(p.batch) * out_plane * groups;
  for (int32_t i = static_cast<int32_t>(global_thread()); i < count;
       i += static_cast<int32_t>(global_threads())) {
    // NHWC (V > 1, or channels_last): channel groups fastest; NCHW (V == 1): positions fastest.
    int32_t n, c, o;
    if (p.channels_last) {
      c = (i % groups) * V;
      o = (i / groups) % out_plane;
      n = i / (groups * out_plane);
    } else {
      o = i % out_plane;
      c = (i / out_plane) % C;
      n = i / (out_plane * C);
    }
    const int32_t o2 = o % g.out[2], o1 = (o / g.out[2]) % g.out[1],
                  o0 = o / (g.out[2] * g.out[1]);
    const int32_t step = p.channels_last ? C : 1;
    const int8_t* xp = p.channels_last ? x + n * in_plane * C + c : x + (n * C + c) * in_plane;
    const int32_t out = p.channels_last ? (n * out_plane + o) * C + c : i;
    bool any = false;
    if constexpr (V == 16) {
      // Four signed bytes a word, from -128 (the max of nothing yet).
      uint32_t best[4] = {0x80808080u, 0x80808080u, 0x80808080u, 0x80808080u};
      visit_window(g, o0, o1, o2, [&](int32_t position) {
        const uint4 v = *reinterpret_cast<const uint4*>(xp + position * step);
        best[0] = __vmaxs4(best[0], v.x);
        best[1] = __vmaxs4(best[1], v.y);
        best[2] = __vmaxs4(best[2], v.z);
        best[3] = __vmaxs4(best[3], v.w);
        any = true;
      });
      *reinterpret_cast<uint4*>(y + out) =
          any ? make_uint4(best[0], best[1], best[2], best[3]) : make_uint4(0, 0, 0, 0);
    } else {
      int8_t best = 0;
      visit_window(g, o0, o1, o2, [&](int32_t position) {
        const int8_t v = xp[position * step];
        best = any && best > v ? best : v;
        any = true;
      });
      y[out] = best;
    }
  }
}

__device__ void max_pool_i8(const StepPointers& ptrs, const PoolParams& p) {
  if (p.spatial_rank < 1 || p.spatial_rank > 3 || p.kind != PoolKind::kMax) return;
  const Geometry geo = pool_geometry_3d(p);
  // The selector refuses Int8 pools past 32-bit offsets; a plan naming this kernel for one
  // anyway (a plan is untrusted) computes nothing.
  if (!fits_int32(p, geo)) return;
  const bool vec = p.channels_last && p.channels % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(ptrs.in[0]) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(ptrs.out[0]) % 16 == 0;
  if (vec) max_pool_i8_vec<16>(ptrs, p, geo);
  else max_pool_i8_vec<1>(ptrs, p, geo);
}

constexpr int kGapLanes = 32;  // channels per block
constexpr int kGapRows = 8;    // partial sums per channel

// Global average pooling, NHWC: block (32 channels) x (8 rows); gridDim.y slices of the spatial
// positions (the selector's, so that small batches still fill the SMs: EfficientNet's squeeze
// convs pool 112x112x32 at batch 1). Row r of a block sums positions r, r + 8, ... of its slice
// and channel, then row 0 adds the 8 partial sums in row order. One slice writes y; with more,
// each block stores its slice's sums in the workspace, counts its arrival (counters after the
// sums, zeroed by the runtime: zero_workspace), and the last block of a channel tile adds the
// slices in slice order and resets the counter. Fixed orders, so the same bits for every launch
// of the plan. Grid-stride over (n, 32-channel tile).
template <typename T>
__device__ void global_average_nhwc(const StepPointers& ptrs, const PoolParams& p) {
  __shared__ float partial[kGapRows][kGapLanes];
  __shared__ bool last;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  int64_t spatial = 1;
  for (int d = 0; d < p.spatial_rank && d < kMaxSpatial; ++d) spatial *= p.in_size[d];
  const int64_t C = p.channels;
  const int64_t tiles_per_n = (C + kGapLanes - 1) / kGapLanes, tiles = p.batch * tiles_per_n;
  const int64_t slices = gridDim.y, slice = blockIdx.y;
  float* sums = static_cast<float*>(ptrs.workspace);
  uint32_t* counters = reinterpret_cast<uint32_t*>(sums + tiles * slices * kGapLanes);
  if (slices > 1 && (sums == nullptr || ptrs.workspace_bytes < uint64_t(tiles) *
                                                                  (slices * kGapLanes * 4 + 4)))
    return;  // a plan with too little workspace computes nothing rather than overrun it
  const int64_t per = (spatial + slices - 1) / slices;
  const int64_t s_begin = slice * per, s_end = s_begin + per < spatial ? s_begin + per : spatial;
  const int lane = threadIdx.x, row = threadIdx.y;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t n = t / tiles_per_n, c = (t % tiles_per_n) * kGapLanes + lane;
    float sum = 0.f;
    if (c < C) {
      const T* xp = x + n * spatial * C + c;
      for (int64_t s = s_begin + row; s < s_end; s += kGapRows) sum += load_float(xp, s * C);
    }
    partial[row][lane] = sum;
    __syncthreads();
    float total = 0.f;
    if (row == 0)
      for (int r = 0; r < kGapRows; ++r) total += partial[r][lane];
    if (slices > 1) {
      if (row == 0) __stcg(sums + (t * slices + slice) * kGapLanes + lane, total);
      __threadfence();
      __syncthreads();
      if (row == 0 && lane == 0) last = atomicAdd(counters + t, 1u) == uint32_t(slices - 1);
      __syncthreads();
      if (last && row == 0) {
        __threadfence();
        total = 0.f;
        for (int64_t z = 0; z < slices; ++z)
          total += __ldcg(sums + (t * slices + z) * kGapLanes + lane);
        if (lane == 0) counters[t] = 0;
      }
    }
    if (row == 0 && c < C && (slices == 1 || last))
      store_float(y, n * C + c, spatial > 0 ? total / static_cast<float>(spatial) : 0.f);
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

JP_HALF_AND_FLOAT_KERNELS(jp_pool, PoolParams, jetplan::kernels::cuda::pool)
JP_STEP_KERNEL(jp_pool_nhwc8_f16, PoolParams, jetplan::kernels::cuda::pool_nhwc8)
JP_HALF_AND_FLOAT_KERNELS(jp_pool_global_avg, PoolParams, jetplan::kernels::cuda::global_average)
JP_STEP_KERNEL(jp_pool_max_i8, PoolParams, jetplan::kernels::cuda::max_pool_i8)
