// Data movement on the GPU: Copy (byte copy), Transpose (strided gather), Concat, Slice and
// Gather. The kernels
// move elements of elem_bytes and never look at the values, so one kernel serves every dtype.
// Twins: kernels/cpu/transform.cc (copy, concat), transpose.cc, slice.cc, gather.cc.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {
namespace {

// Unsigned storage of N bytes (the unit a kernel moves).
template <int N> struct Unit;
template <> struct Unit<1> { using T = uint8_t; };
template <> struct Unit<2> { using T = uint16_t; };
template <> struct Unit<4> { using T = uint32_t; };
template <> struct Unit<8> { using T = uint2; };
template <> struct Unit<16> { using T = uint4; };

// The largest power of two up to 16 dividing every argument.
__device__ __forceinline__ int unit_bytes(uint64_t bits) {
  int u = 16;
  while (u > 1 && (bits & static_cast<uint64_t>(u - 1)) != 0) u >>= 1;
  return u;
}

template <int N>
__device__ void copy_units(const void* x, void* y, int64_t units) {
  using T = typename Unit<N>::T;
  const T* s = static_cast<const T*>(x);
  T* d = static_cast<T*>(y);
  for (int64_t i = global_thread(); i < units; i += global_threads()) d[i] = s[i];
}

// Disjoint ranges copy in parallel with the widest unit both pointers and the size allow. Ranges
// that partly overlap (the twin's memmove) are copied by one thread in the safe direction: no
// plan the converter writes does that, so it only has to be right, not fast.
__device__ void copy_bytes(const void* x, void* y, int64_t bytes) {
  const uintptr_t s = reinterpret_cast<uintptr_t>(x), d = reinterpret_cast<uintptr_t>(y);
  if (s == d || bytes <= 0) return;
  const uint64_t n = static_cast<uint64_t>(bytes);
  if ((s < d && d - s < n) || (d < s && s - d < n)) {
    if (global_thread() != 0) return;
    const uint8_t* src = static_cast<const uint8_t*>(x);
    uint8_t* dst = static_cast<uint8_t*>(y);
    if (d < s) {
      for (uint64_t i = 0; i < n; ++i) dst[i] = src[i];
    } else {
      for (uint64_t i = n; i-- > 0;) dst[i] = src[i];
    }
    return;
  }
  switch (unit_bytes(s | d | n)) {
    case 16: copy_units<16>(x, y, bytes / 16); break;
    case 8: copy_units<8>(x, y, bytes / 8); break;
    case 4: copy_units<4>(x, y, bytes / 4); break;
    case 2: copy_units<2>(x, y, bytes / 2); break;
    default: copy_units<1>(x, y, bytes); break;
  }
}

// What an element becomes as a transpose moves it: itself, or FP16 widened to FP32.
template <typename TO, typename TI>
__device__ __forceinline__ TO moved(TI v) {
  return v;
}
template <>
__device__ __forceinline__ float moved<float, __half>(__half v) {
  return __half2float(v);
}

// Generic transpose: one output element per thread, its source offset from the dense output
// coordinate and x_strides. TI and TO: x's and y's element types.
template <typename TI, typename TO>
__device__ void transpose_generic(const TransposeParams& p, const void* x, void* y) {
  const TI* s = static_cast<const TI*>(x);
  TO* d = static_cast<TO*>(y);
  int64_t count = 1;
  for (int32_t k = 0; k < p.rank; ++k) count *= p.out_dims[k];
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, off = 0;
    for (int32_t k = p.rank - 1; k >= 0; --k) {
      const int64_t c = rest % p.out_dims[k];
      rest /= p.out_dims[k];
      off += c * p.x_strides[k];
    }
    d[i] = moved<TO>(s[off]);
  }
}

// The view a tiled transpose handles: y dense [batch, rows, cols], x element (b, r, c) at
// b * batch_stride + r + c * col_stride (rows contiguous in x, cols contiguous in y). NCHW <->
// NHWC both coalesce to it (H and W merge). Found from the params on the device, so a plan that
// names the tiled kernel for another permutation still runs correctly, on the generic path.
struct TileView {
  int64_t batch, rows, cols, batch_stride, col_stride;
};

__device__ bool tile_view(const TransposeParams& p, TileView* v) {
  // Coalesce: drop extent-1 dims, merge a dim into the next when x holds them as one.
  int64_t dims[kMaxRank], strides[kMaxRank];
  int n = 0;
  for (int32_t k = 0; k < p.rank; ++k) {
    if (p.out_dims[k] == 1) continue;
    if (n > 0 && strides[n - 1] == p.x_strides[k] * p.out_dims[k]) {
      dims[n - 1] *= p.out_dims[k];
      strides[n - 1] = p.x_strides[k];
    } else {
      dims[n] = p.out_dims[k];
      strides[n] = p.x_strides[k];
      ++n;
    }
  }
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
  const int64_t row_tiles = (v.rows + kTile - 1) / kTile, col_tiles = (v.cols + kTile - 1) / kTile;
  const int64_t tiles = v.batch * row_tiles * col_tiles;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t ct = t % col_tiles, rt = (t / col_tiles) % row_tiles, b = t / (col_tiles * row_tiles);
    const int64_t r0 = rt * kTile, c0 = ct * kTile;
    const TI* sb = s + b * v.batch_stride;
    TO* db = d + b * v.rows * v.cols;
    for (int j = ty; j < kTile; j += kTileRows) {  // j: col within tile, tx: row
      const int64_t r = r0 + tx, c = c0 + j;
      if (r < v.rows && c < v.cols) tile[j][tx] = sb[r + c * v.col_stride];
    }
    __syncthreads();
    for (int j = ty; j < kTile; j += kTileRows) {  // j: row within tile, tx: col
      const int64_t r = r0 + j, c = c0 + tx;
      if (r < v.rows && c < v.cols) db[r * v.cols + c] = moved<TO>(tile[tx][j]);
    }
    __syncthreads();
  }
}

// y [outer, sum(axis_len), inner]: thread per unit of y, its input found by the running sum of
// axis_len (in order: up to 64 inputs). Units are the widest power of two dividing every
// input's pointer and inner * elem_bytes, so rows of every input split into whole units.
template <int N>
__device__ void concat_units(const StepPointers& ptrs, const ConcatParams& p, int64_t row_units) {
  using T = typename Unit<N>::T;
  int64_t total = 0;
  for (int32_t k = 0; k < p.num_inputs; ++k) total += p.axis_len[k];
  const int64_t y_row = total * row_units;  // units per outer index in y
  const int64_t count = p.outer * y_row;
  T* d = static_cast<T*>(ptrs.out[0]);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t o = i / y_row;
    int64_t r = i - o * y_row;
    int32_t k = 0;
    while (k + 1 < p.num_inputs && r >= p.axis_len[k] * row_units) {
      r -= p.axis_len[k] * row_units;
      ++k;
    }
    d[i] = static_cast<const T*>(ptrs.in[k])[o * p.axis_len[k] * row_units + r];
  }
}

__device__ void concat(const StepPointers& ptrs, const ConcatParams& p) {
  const int64_t row_bytes = p.inner * p.elem_bytes;
  uint64_t bits = static_cast<uint64_t>(row_bytes) | reinterpret_cast<uintptr_t>(ptrs.out[0]);
  for (int32_t k = 0; k < p.num_inputs && k < kMaxConcatInputs; ++k)
    if (p.axis_len[k] > 0) bits |= reinterpret_cast<uintptr_t>(ptrs.in[k]);
  if (p.num_inputs < 1 || p.num_inputs > kMaxConcatInputs || row_bytes <= 0) return;
  switch (unit_bytes(bits)) {
    case 16: concat_units<16>(ptrs, p, row_bytes / 16); break;
    case 8: concat_units<8>(ptrs, p, row_bytes / 8); break;
    case 4: concat_units<4>(ptrs, p, row_bytes / 4); break;
    case 2: concat_units<2>(ptrs, p, row_bytes / 2); break;
    default: concat_units<1>(ptrs, p, row_bytes); break;
  }
}

// Slice: one output element per thread; x element starts[d] + c[d] * steps[d] along each dim.
template <int N>
__device__ void slice(const SliceParams& p, const void* x, void* y) {
  using T = typename Unit<N>::T;
  const T* s = static_cast<const T*>(x);
  T* d = static_cast<T*>(y);
  int64_t count = 1;
  for (int32_t k = 0; k < p.rank; ++k) count *= p.out_dims[k];
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, off = 0, stride = 1;
    for (int32_t k = p.rank - 1; k >= 0; --k) {
      const int64_t c = rest % p.out_dims[k];
      rest /= p.out_dims[k];
      off += (p.starts[k] + c * p.steps[k]) * stride;
      stride *= p.x_dims[k];
    }
    d[i] = s[off];
  }
}

// Gather: y [outer, num_indices, inner] in units of the widest power of two dividing the slab
// (inner * elem_bytes) and both pointers; an index outside [-axis_len, axis_len) gives zeros.
template <int N>
__device__ void gather_units(const StepPointers& ptrs, const GatherParams& p, int64_t row_units) {
  using T = typename Unit<N>::T;
  const T* s = static_cast<const T*>(ptrs.in[0]);
  T* d = static_cast<T*>(ptrs.out[0]);
  const int64_t count = p.outer * p.num_indices * row_units;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t u = i % row_units, j = (i / row_units) % p.num_indices,
                  o = i / (row_units * p.num_indices);
    int64_t k = p.index_dtype == DType::kInt32 ? static_cast<const int32_t*>(ptrs.in[1])[j]
                                               : static_cast<const int64_t*>(ptrs.in[1])[j];
    if (k < 0) k += p.axis_len;
    if (k >= 0 && k < p.axis_len) {
      d[i] = s[(o * p.axis_len + k) * row_units + u];
    } else {
      T zero;
      memset(&zero, 0, sizeof zero);
      d[i] = zero;
    }
  }
}

__device__ void gather(const StepPointers& ptrs, const GatherParams& p) {
  const int64_t row_bytes = p.inner * p.elem_bytes;
  if (row_bytes <= 0) return;
  if (p.index_dtype != DType::kInt32 && p.index_dtype != DType::kInt64) return;
  const uint64_t bits = static_cast<uint64_t>(row_bytes) |
                        reinterpret_cast<uintptr_t>(ptrs.in[0]) |
                        reinterpret_cast<uintptr_t>(ptrs.out[0]);
  switch (unit_bytes(bits)) {
    case 16: gather_units<16>(ptrs, p, row_bytes / 16); break;
    case 8: gather_units<8>(ptrs, p, row_bytes / 8); break;
    case 4: gather_units<4>(ptrs, p, row_bytes / 4); break;
    case 2: gather_units<2>(ptrs, p, row_bytes / 2); break;
    default: gather_units<1>(ptrs, p, row_bytes); break;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ConcatParams;
using jetplan::kernels::CopyParams;
using jetplan::kernels::GatherParams;
using jetplan::kernels::SliceParams;
using jetplan::kernels::TransposeParams;
using jetplan::kernels::cuda::StepPointers;
namespace jk = jetplan::kernels::cuda;

extern "C" __global__ void jp_copy(StepPointers ptrs, const CopyParams p) {
  jk::copy_bytes(ptrs.in[0], ptrs.out[0], p.bytes);
}
extern "C" __global__ void jp_concat(StepPointers ptrs, const ConcatParams p) {
  jk::concat(ptrs, p);
}
extern "C" __global__ void jp_gather(StepPointers ptrs, const GatherParams p) {
  jk::gather(ptrs, p);
}
extern "C" __global__ void jp_slice(StepPointers ptrs, const SliceParams p) {
  switch (p.elem_bytes) {
    case 1: jk::slice<1>(p, ptrs.in[0], ptrs.out[0]); break;
    case 2: jk::slice<2>(p, ptrs.in[0], ptrs.out[0]); break;
    case 4: jk::slice<4>(p, ptrs.in[0], ptrs.out[0]); break;
    case 8: jk::slice<8>(p, ptrs.in[0], ptrs.out[0]); break;
    default: break;
  }
}

// The byte-moving variants never run a converting transpose (y's elements are wider than x's).
#define JP_TRANSPOSE(N)                                                                  \
  extern "C" __global__ void jp_transpose_b##N(StepPointers ptrs, const TransposeParams p) { \
    using T = jk::Unit<N>::T;                                                            \
    if (p.elem_bytes == N && !p.half_to_float)                                           \
      jk::transpose_generic<T, T>(p, ptrs.in[0], ptrs.out[0]);                           \
  }                                                                                      \
  extern "C" __global__ void jp_transpose_tiled_b##N(StepPointers ptrs,                  \
                                                     const TransposeParams p) {          \
    using T = jk::Unit<N>::T;                                                            \
    if (p.elem_bytes == N && !p.half_to_float)                                           \
      jk::transpose_tiled<T, T>(p, ptrs.in[0], ptrs.out[0]);                             \
  }
JP_TRANSPOSE(1)
JP_TRANSPOSE(2)
JP_TRANSPOSE(4)
JP_TRANSPOSE(8)

// FP16 in, FP32 out (the output cast fused into a GPU plan's last layout transpose).
extern "C" __global__ void jp_transpose_h2f(StepPointers ptrs, const TransposeParams p) {
  if (p.elem_bytes == 2 && p.half_to_float)
    jk::transpose_generic<__half, float>(p, ptrs.in[0], ptrs.out[0]);
}
extern "C" __global__ void jp_transpose_tiled_h2f(StepPointers ptrs, const TransposeParams p) {
  if (p.elem_bytes == 2 && p.half_to_float)
    jk::transpose_tiled<__half, float>(p, ptrs.in[0], ptrs.out[0]);
}
