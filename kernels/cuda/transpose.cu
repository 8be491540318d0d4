// Transpose on the GPU (a strided gather; tiled through shared memory when the permutation
// coalesces to a 2-D one; whole rows in wide units when it keeps the innermost dim): moves
// elements of elem_bytes and never looks at the values, so one kernel serves every dtype, or
// widens FP16 to FP32 as it moves (half_to_float), or rounds FP32 to FP16 (float_to_half, to
// nearest even like the twin's half_from_float). Twin: kernels/cpu/transpose.cc.
#include <cuda_fp16.h>
#include <cstdint>

#include "kernels/cuda/byte_units.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/transpose.h"

namespace jetplan::kernels::cuda {
namespace {

// What an element becomes as a transpose moves it: itself, or FP16 widened to FP32.
template <typename TO, typename TI>
__device__ __forceinline__ TO moved(TI v) {
  return v;
}
template <>
__device__ __forceinline__ float moved<float, __half>(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ __half moved<__half, float>(float v) {
  return __float2half_rn(v);
}

// The 32-bit loop both movers run where every index fits: element (or unit) i of the dense
// result from x's offset over dims and strides held in registers, to y.at(i) (the caller's
// units). Loops over every possible dim with those past the rank skipped, so that nothing lives
// in local memory. Each thread loads kIlp elements
// before it stores any: with one load in flight a warp (a store after each, which the compiler
// may not move past the next load: x and y may alias), a YOLO head's permute from FP16 to FP32
// moved 78 MB in 93 us (H100, session 33), bound by the loads' latency.
constexpr int kIlp = 4;
template <typename TO, typename TI>
__device__ __forceinline__ void move_32(int n, int64_t count, const uint32_t (&dim)[kMaxRank],
                                        const uint32_t (&stride)[kMaxRank],
                                        const YPlace<uint32_t>& y, const TI* s, TO* d) {
  const auto source = [&](uint32_t i) {
    uint32_t rest = i, off = 0;
#pragma unroll
    for (int k = kMaxRank - 1; k > 0; --k) {
      if (k >= n) continue;
      const uint32_t c = rest % dim[k];
      rest /= dim[k];
      off += c * stride[k];
    }
    return off + rest * stride[0];
  };
  const int64_t threads = global_threads();
  int64_t i = global_thread();
  for (; i + (kIlp - 1) * threads < count; i += kIlp * threads) {
    TI v[kIlp];
#pragma unroll
    for (int u = 0; u < kIlp; ++u) v[u] = s[source(static_cast<uint32_t>(i + u * threads))];
#pragma unroll
    for (int u = 0; u < kIlp; ++u) d[y.at(static_cast<uint32_t>(i + u * threads))] = moved<TO>(v[u]);
  }
  for (; i < count; i += threads) {
    const uint32_t i32 = static_cast<uint32_t>(i);
    d[y.at(i32)] = moved<TO>(s[source(i32)]);
  }
}

// Generic transpose: one output element per thread, its source offset from the dense output
// coordinate and x_strides, its place in y from y_index. TI and TO: x's and y's element types.
// Index math in 32 bits over dims held in registers where every index fits (loops over every
// possible dim, those past the rank skipped, so nothing lives in local memory), else in 64.
template <typename TI, typename TO>
__device__ void transpose_generic(const TransposeParams& p, const void* x, void* y) {
  const TI* s = static_cast<const TI*>(x);
  TO* d = static_cast<TO*>(y);
  const int n = p.rank;
  int64_t count = 1, x_last = 0;
  uint32_t dim[kMaxRank], stride[kMaxRank];
#pragma unroll
  for (int k = 0; k < kMaxRank; ++k) {
    const int64_t dk = k < n ? p.out_dims[k] : 1, sk = k < n ? p.x_strides[k] : 0;
    count *= dk;
    x_last += (dk - 1) * sk;
    dim[k] = static_cast<uint32_t>(dk);
    stride[k] = static_cast<uint32_t>(sk);
  }
  if (count == 0) return;
  if (count > INT32_MAX || x_last > INT32_MAX || y_index(p, count - 1) > INT32_MAX) {
    for (int64_t i = global_thread(); i < count; i += global_threads()) {
      int64_t rest = i, off = 0;
      for (int32_t k = n - 1; k >= 0; --k) {
        const int64_t c = rest % p.out_dims[k];
        rest /= p.out_dims[k];
        off += c * p.x_strides[k];
      }
      d[y_index(p, i)] = moved<TO>(s[off]);
    }
    return;
  }
  const YPlace<uint32_t> place{p.y_block != 0, static_cast<uint32_t>(p.y_block),
                               static_cast<uint32_t>(p.y_block_stride),
                               static_cast<uint32_t>(p.y_offset)};
  move_32<TO>(n, count, dim, stride, place, s, d);
}

// A transpose that keeps x's innermost dim (a head split, [B, S, H, D] -> [B, H, S, D]) moves
// runs of whole rows: y's last dim is contiguous in x too, so the kernel moves units of up to 16
// bytes (the widest that the run's bytes, x's strides and both addresses allow, byte_units.cuh)
// where the generic path moved one element with a 64-bit division per dim. The runtime hands
// over the coalesced view (prepare_transpose); any other is still moved right. Loops run over
// every possible dim with those past the rank skipped, so that nothing lives in local memory
// (every thread of the grid, idle ones included, runs the setup). False (nothing moved) for
// another permutation.
template <int N>
__device__ void transpose_units(const TransposeParams& p, const void* x, void* y) {
  using U = typename Unit<N>::T;
  const U* s = static_cast<const U*>(x);
  U* d = static_cast<U*>(y);
  const int n = p.rank;
  const int64_t per = N / p.elem_bytes;  // elements a unit
  uint32_t dim[kMaxRank], stride[kMaxRank];
  int64_t count = 1;
  bool fits = true;
#pragma unroll
  for (int k = 0; k < kMaxRank; ++k) {
    const int64_t dk = k < n - 1 ? p.out_dims[k] : k == n - 1 ? p.out_dims[k] / per : 1;
    const int64_t sk = k < n - 1 ? p.x_strides[k] / per : k == n - 1 ? 1 : 0;
    count *= dk;
    fits &= dk * (sk + 1) <= INT32_MAX;
    dim[k] = static_cast<uint32_t>(dk);
    stride[k] = static_cast<uint32_t>(sk);
  }
  // y in units: blocks of yb units, ys apart from yo (transpose_runs made them whole units); a
  // dense y is one block of all.
  const int64_t yb = p.y_block != 0 ? p.y_block / per : count;
  const int64_t ys = p.y_block != 0 ? p.y_block_stride / per : count;
  const int64_t yo = p.y_block != 0 ? p.y_offset / per : 0;
  fits &= count == 0 || yo + (count / yb - 1) * ys + yb <= INT32_MAX;
  if (count > INT32_MAX || !fits) {  // 64-bit index math (a tensor of 2^31 units or more)
    for (int64_t i = global_thread(); i < count; i += global_threads()) {
      int64_t rest = i, off = 0;
      for (int k = n - 1; k >= 0; --k) {
        const int64_t dk = k == n - 1 ? p.out_dims[k] / per : p.out_dims[k];
        const int64_t c = rest % dk;
        rest /= dk;
        off += c * (k == n - 1 ? 1 : p.x_strides[k] / per);
      }
      d[YPlace<int64_t>{p.y_block != 0, yb, ys, yo}.at(i)] = s[off];
    }
    return;
  }
  const YPlace<uint32_t> place{p.y_block != 0, static_cast<uint32_t>(yb),
                               static_cast<uint32_t>(ys), static_cast<uint32_t>(yo)};
  move_32<U>(n, count, dim, stride, place, s, d);
}

__device__ bool transpose_runs(const TransposeParams& p, const void* x, void* y) {
  const int n = p.rank;
  if (n < 2 || n > kMaxRank || p.x_strides[n - 1] != 1) return false;
  const int64_t e = p.elem_bytes;
  uint64_t bits = static_cast<uint64_t>(p.out_dims[n - 1] * e) | reinterpret_cast<uintptr_t>(x) |
                  reinterpret_cast<uintptr_t>(y) | static_cast<uint64_t>(p.y_block * e) |
                  static_cast<uint64_t>(p.y_block_stride * e) | static_cast<uint64_t>(p.y_offset * e);
#pragma unroll
  for (int k = 0; k < kMaxRank - 1; ++k)
    if (k < n - 1) bits |= static_cast<uint64_t>(p.x_strides[k] * e);
  const int unit = unit_bytes(bits);
  if (unit <= e) return false;  // no wider than an element: the generic path
  switch (unit) {
    case 16: transpose_units<16>(p, x, y); break;
    case 8: transpose_units<8>(p, x, y); break;
    case 4: transpose_units<4>(p, x, y); break;
    default: transpose_units<2>(p, x, y); break;
  }
  return true;
}

// The view a tiled transpose handles: y dense [batch, rows, cols], x element (b, r, c) at
// b * batch_stride + r + c * col_stride (rows contiguous in x, cols contiguous in y). NCHW <->
// NHWC both coalesce to it (H and W merge). Found from the params on the device, so a plan that
// names the tiled kernel for another permutation still runs correctly, on the generic path.
struct TileView {
  int64_t batch, rows, cols, batch_stride, col_stride;
};

__device__ bool tile_view(const TransposeParams& p, TileView* v) {
  int64_t dims[kMaxRank], strides[kMaxRank];
  const int n = coalesce_transpose(p, dims, strides);
  if (n == 2 && strides[0] == 1) {
    *v = {1, dims[0], dims[1], 0, strides[1]};
    return true;
  }
  if (n == 3 && strides[1] == 1) {
    *v = {dims[0], dims[1], dims[2], strides[0], strides[2]};
    return true;
  }
  return false;
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // block: kTile x kTileRows threads
// At most this many rows or cols: a 32x32 tile would hold mostly nothing (a 3-channel image's
// NCHW -> NHWC moves 32 x 3 of its 1024 elements a tile), so each thread moves one whole line.
constexpr int64_t kNarrow = 8;

// The narrow view, one thread per line: a row of y (all its cols) when cols are few, a col of y
// (all its rows) when rows are. Either way a warp's reads and its writes are each one contiguous
// run for every step of the thread's loop. A line is at most kNarrow elements, and the index math
// is 32-bit where every index fits. A 3-channel image's NCHW -> NHWC (8 x 3 x 640 x 640, FP32 in
// and FP16 out, 52 MB) took 65 us with 64-bit math throughout, 57 with 32-bit math and 55 with
// each line's loads before its stores (H100, sessions 32 and 33): still 1 TB/s.
template <typename TI, typename TO>
__device__ void transpose_lines(const TransposeParams& p, const TileView& v, const TI* s, TO* d) {
  const bool by_row = v.cols <= kNarrow;
  const int64_t lines = v.batch * (by_row ? v.rows : v.cols), len = by_row ? v.cols : v.rows;
  const int64_t per_batch = by_row ? v.rows : v.cols;
  const int64_t threads = int64_t(gridDim.x) * blockDim.x * blockDim.y;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x * blockDim.y + threadIdx.y * blockDim.x +
                        threadIdx.x;
  const int64_t count = v.batch * v.rows * v.cols;
  if (count == 0) return;
  const int64_t x_last = (v.batch - 1) * v.batch_stride + (v.rows - 1) + (v.cols - 1) * v.col_stride;
  if (count > INT32_MAX || x_last > INT32_MAX || y_index(p, count - 1) > INT32_MAX) {
    for (int64_t i = first; i < lines; i += threads) {
      const int64_t b = i / per_batch, l = i - b * per_batch;
      const TI* sb = s + b * v.batch_stride;
      const int64_t yb = b * v.rows * v.cols;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t r = by_row ? l : k, c = by_row ? k : l;
        d[y_index(p, yb + r * v.cols + c)] = moved<TO>(sb[r + c * v.col_stride]);
      }
    }
    return;
  }
  const uint32_t per = static_cast<uint32_t>(per_batch), n = static_cast<uint32_t>(len);
  const uint32_t rows = static_cast<uint32_t>(v.rows), cols = static_cast<uint32_t>(v.cols);
  const uint32_t bstride = static_cast<uint32_t>(v.batch_stride);
  const uint32_t cstride = static_cast<uint32_t>(v.col_stride);
  const YPlace<uint32_t> place{p.y_block != 0, static_cast<uint32_t>(p.y_block),
                               static_cast<uint32_t>(p.y_block_stride),
                               static_cast<uint32_t>(p.y_offset)};
  for (int64_t i = first; i < lines; i += threads) {
    const uint32_t i32 = static_cast<uint32_t>(i), b = i32 / per, l = i32 - b * per;
    const TI* sb = s + b * bstride;
    const uint32_t y0 = b * rows * cols;
    // The line's loads all in flight before its stores (move_32 says why).
    TI v[kNarrow];
#pragma unroll
    for (uint32_t k = 0; k < uint32_t(kNarrow); ++k)
      if (k < n) v[k] = sb[by_row ? l + k * cstride : k + l * cstride];
#pragma unroll
    for (uint32_t k = 0; k < uint32_t(kNarrow); ++k) {
      if (k >= n) break;
      const uint32_t r = by_row ? l : k, c = by_row ? k : l;
      d[place.at(y0 + r * cols + c)] = moved<TO>(v[k]);
    }
  }
}

// Each block moves 32x32 tiles through shared memory: reads along rows (contiguous in x),
// writes along cols (contiguous in y). Tiles are visited grid-stride, so any grid is safe.
template <typename TI, typename TO>
__device__ void transpose_tiled(const TransposeParams& p, const void* x, void* y) {
  TileView v;
  if (blockDim.x != kTile || blockDim.y != kTileRows || blockDim.z != 1 || !tile_view(p, &v)) {
    transpose_generic<TI, TO>(p, x, y);
    return;
  }
  __shared__ TI tile[kTile][kTile + 1];
  const TI* s = static_cast<const TI*>(x);
  TO* d = static_cast<TO*>(y);
  if (v.rows <= kNarrow || v.cols <= kNarrow) {
    transpose_lines<TI, TO>(p, v, s, d);
    return;
  }
  const int64_t row_tiles = (v.rows + kTile - 1) / kTile, col_tiles = (v.cols + kTile - 1) / kTile;
  const int64_t tiles = v.batch * row_tiles * col_tiles;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t ct = t % col_tiles, rt = (t / col_tiles) % row_tiles, b = t / (col_tiles * row_tiles);
    const int64_t r0 = rt * kTile, c0 = ct * kTile;
    const TI* sb = s + b * v.batch_stride;
    const int64_t yb = b * v.rows * v.cols;
    for (int j = ty; j < kTile; j += kTileRows) {  // j: col within tile, tx: row
      const int64_t r = r0 + tx, c = c0 + j;
      if (r < v.rows && c < v.cols) tile[j][tx] = sb[r + c * v.col_stride];
    }
    __syncthreads();
    for (int j = ty; j < kTile; j += kTileRows) {  // j: row within tile, tx: col
      const int64_t r = r0 + j, c = c0 + tx;
      if (r < v.rows && c < v.cols) d[y_index(p, yb + r * v.cols + c)] = moved<TO>(tile[tx][j]);
    }
    __syncthreads();
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::TransposeParams;
using jetplan::kernels::cuda::StepPointers;
namespace jk = jetplan::kernels::cuda;

// The byte-moving variants never run a converting transpose (y's elements are not x's).
#define JP_TRANSPOSE(N)                                                                  \
  extern "C" __global__ void jp_transpose_b##N(StepPointers ptrs, const TransposeParams p) { \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    using T = jk::Unit<N>::T;                                                            \
    if (p.elem_bytes == N && !p.half_to_float && !p.float_to_half &&                     \
        !jk::transpose_runs(p, ptrs.in[0], ptrs.out[0]))                                 \
      jk::transpose_generic<T, T>(p, ptrs.in[0], ptrs.out[0]);                           \
  }                                                                                      \
  extern "C" __global__ void jp_transpose_tiled_b##N(StepPointers ptrs,                  \
                                                     const TransposeParams p) {          \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    using T = jk::Unit<N>::T;                                                            \
    if (p.elem_bytes == N && !p.half_to_float && !p.float_to_half)                       \
      jk::transpose_tiled<T, T>(p, ptrs.in[0], ptrs.out[0]);                             \
  }
JP_TRANSPOSE(1)
JP_TRANSPOSE(2)
JP_TRANSPOSE(4)
JP_TRANSPOSE(8)

// The converting pairs, generic and tiled: FP16 in, FP32 out (h2f, the output cast fused into a
// GPU plan's last layout transpose) and FP32 in, FP16 out (f2h, the input cast fused into its
// first); each runs only params that ask for its conversion.
#define JP_CONVERTING_TRANSPOSE(suffix, TI, TO, flag)                                        \
  extern "C" __global__ void jp_transpose_##suffix(StepPointers ptrs, const TransposeParams p) { \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    if (p.elem_bytes == int64_t(sizeof(TI)) && p.flag)                                       \
      jk::transpose_generic<TI, TO>(p, ptrs.in[0], ptrs.out[0]);                             \
  }                                                                                          \
  extern "C" __global__ void jp_transpose_tiled_##suffix(StepPointers ptrs,                  \
                                                         const TransposeParams p) {          \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    if (p.elem_bytes == int64_t(sizeof(TI)) && p.flag)                                       \
      jk::transpose_tiled<TI, TO>(p, ptrs.in[0], ptrs.out[0]);                               \
  }
JP_CONVERTING_TRANSPOSE(h2f, __half, float, half_to_float)
JP_CONVERTING_TRANSPOSE(f2h, float, __half, float_to_half)
