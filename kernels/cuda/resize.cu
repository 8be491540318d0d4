// Resize on the GPU, FP16, FP32 or (nearest and linear) Int8 storage, any rank (NHWC and NCHW alike: a dim that is not
// resized has scale 1): nearest (every rounding), linear and cubic, every ONNX coordinate
// transform. The twin is kernels/cpu/resize.cc; both take their taps from kernels/resize_math.h
// (source coordinates in double: nearest picks at exact halves depend on it); here the weights
// and the sum are FP32.
//
//   jp_resize_hw_*      rank 4, H and W of an NHWC image, nearest or linear
//                       (resize_math::resizes_hw_only): row tiles, taps in registers
//   jp_resize_pixels_*  the other rank-4 steps: a thread per output pixel and 8 elements
//   jp_resize_*         every rank: a thread per output element
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/resize.h"
#include "kernels/resize_math.h"

namespace jetplan::kernels::cuda {
namespace {

using resize_math::dim_taps;
using resize_math::tap_product_sum;
using Taps = resize_math::Taps<float>;  // weights in FP32, as the sum

// One output element per thread: element(o, taps, in_stride) with the taps of every dim, or
// outside(o) where tf_crop_and_resize puts the element outside the input. o is the dense
// result's index (y_index places it in y: a Concat written in place). Dims with a single
// weight-1 tap (not resized) cost nothing.
template <typename Element, typename Outside>
__device__ void for_each_output(const ResizeParams& p, Element element, Outside outside) {
  if (p.rank < 1 || p.rank > kMaxRank) return;
  const int rank = p.rank;
  int64_t in_stride[kMaxRank];
  int64_t stride = 1, out_count = 1;
  for (int d = rank; d-- > 0;) {
    in_stride[d] = stride;
    stride *= p.in_dims[d];
    out_count *= p.out_dims[d];
  }
  for (int64_t o = global_thread(); o < out_count; o += global_threads()) {
    Taps taps[kMaxRank];
    bool inside = true;
    int64_t rest = o;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      inside = dim_taps(p, d, c, &taps[d]) && inside;
      if (taps[d].count == 0) inside = false;  // no tap: only from absurd weights
    }
    if (inside) element(o, static_cast<const Taps*>(taps), static_cast<const int64_t*>(in_stride));
    else outside(o);
  }
}

// Rank 4 (the NHWC activations of GPU plans, N and C kept): one thread per output pixel of dims
// 0-2 and run of kRun elements of dim 3. The pixel is placed and its dims' taps computed once,
// not for every element as above (four 64-bit divisions and four dims' taps an element); dim
// 3's taps come from the same dim_taps per element, and every element goes through the same
// element() call with the same taps: the generic kernel's bits, and the twin's. The rank-4
// steps resize_hw below does not take (cubic, tf_crop_and_resize, tf_half_pixel_for_nn, N or C
// resized) come here; their taps live in local memory (dim_taps and the rank-generic fold index
// them at run time).
constexpr int64_t kRun = 8;
template <typename Element, typename Outside>
__device__ void for_each_pixel_run(const ResizeParams& p, Element element, Outside outside) {
  if (p.rank != 4) return;
  int64_t in_stride[4];
  int64_t stride = 1;
  for (int d = 3; d >= 0; --d) {
    in_stride[d] = stride;
    stride *= p.in_dims[d];
  }
  const int64_t oh = p.out_dims[1], ow = p.out_dims[2], c = p.out_dims[3];
  const int64_t runs = (c + kRun - 1) / kRun;
  const int64_t items = p.out_dims[0] * oh * ow * runs;
  for (int64_t it = global_thread(); it < items; it += global_threads()) {
    const int64_t pixel = it / runs, c0 = (it - pixel * runs) * kRun;
    const int64_t x = pixel % ow, rest = pixel / ow;
    Taps taps[4];
    bool inside = dim_taps(p, 0, rest / oh, &taps[0]);
    inside = dim_taps(p, 1, rest % oh, &taps[1]) && inside;
    inside = dim_taps(p, 2, x, &taps[2]) && inside;
    for (int d = 0; d < 3; ++d) inside = inside && taps[d].count > 0;
    const int64_t end = c0 + kRun < c ? c0 + kRun : c;
    for (int64_t k = c0; k < end; ++k) {
      const bool in = dim_taps(p, 3, k, &taps[3]) && inside && taps[3].count > 0;
      if (in)
        element(pixel * c + k, static_cast<const Taps*>(taps),
                static_cast<const int64_t*>(in_stride));
      else
        outside(pixel * c + k);
    }
  }
}

// The sum over the taps' product, dim 0 outermost (the twin's order).
template <typename T>
__device__ void resize(const StepPointers& ptrs, const ResizeParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  for_each_output(
      p,
      [&](int64_t o, const Taps* taps, const int64_t* in_stride) {
        store_float(y, y_index(p, o),
                    tap_product_sum(p.rank, taps, in_stride,
                                    [x](int64_t offset) { return load_float(x, offset); }));
      },
      [&](int64_t o) { store_float(y, y_index(p, o), p.extrapolation_value); });
}

// Int8 in x's scale (an INT8 plan's nearest or linear Resize): the twin's
// resize_math::int8_tap_sum (the same bits). tf_crop_and_resize has no Int8 form (the selector
// refuses it); an element outside the input would be 0.
__device__ void resize_i8(const StepPointers& ptrs, const ResizeParams& p) {
  const int8_t* x = static_cast<const int8_t*>(ptrs.in[0]);
  int8_t* y = static_cast<int8_t*>(ptrs.out[0]);
  for_each_output(
      p,
      [&](int64_t o, const Taps* taps, const int64_t* in_stride) {
        y[y_index(p, o)] = resize_math::int8_tap_sum(p.rank, taps, in_stride, x);
      },
      [&](int64_t o) { y[y_index(p, o)] = 0; });
}

// The same two over pixel runs (rank 4).
template <typename T>
__device__ void resize_pixels(const StepPointers& ptrs, const ResizeParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  for_each_pixel_run(
      p,
      [&](int64_t o, const Taps* taps, const int64_t* in_stride) {
        store_float(y, y_index(p, o),
                    tap_product_sum(p.rank, taps, in_stride,
                                    [x](int64_t offset) { return load_float(x, offset); }));
      },
      [&](int64_t o) { store_float(y, y_index(p, o), p.extrapolation_value); });
}
__device__ void resize_pixels_i8(const StepPointers& ptrs, const ResizeParams& p) {
  const int8_t* x = static_cast<const int8_t*>(ptrs.in[0]);
  int8_t* y = static_cast<int8_t*>(ptrs.out[0]);
  for_each_pixel_run(
      p,
      [&](int64_t o, const Taps* taps, const int64_t* in_stride) {
        y[y_index(p, o)] = resize_math::int8_tap_sum(p.rank, taps, in_stride, x);
      },
      [&](int64_t o) { y[y_index(p, o)] = 0; });
}

// ------------------------------------------------ H and W of an NHWC image (resizes_hw_only)
// The steps resize_math::resizes_hw_only takes (every GPU plan's nearest and bilinear image
// Resize). The pixel-run kernel above keeps its taps in arrays indexed at run time, which nvcc
// puts in local memory (288 bytes of stack a thread), and computes them in double for every
// pixel and element. Here a block takes tiles of one output row, (n, oy) and up to kMaxCols
// consecutive output columns with all their channels: the row's taps and each column's are
// computed once into shared memory (TapPair: fixed slots), then every thread makes 16 bytes of
// channels (8 FP16, 4 FP32 or 16 Int8: one 16-byte load a tap and one store) where C and the
// pointers allow, else one element, with the taps in registers. The arithmetic is the
// rank-generic fold's for these steps: weight wy * wx (its 1 * 1 * wy * wx * 1), fmaf over the
// taps in (y, x) order from 0, so the bits are the other kernels' (Int8: int8_tap_sum's).
constexpr int kMaxCols = 256;

// One axis's taps of one output coordinate, as the kernel reads them.
struct AxisTaps {
  int32_t index[2];
  float weight[2];
  int32_t count;
};
__device__ __forceinline__ AxisTaps axis_taps(const ResizeParams& p, int d, int64_t o) {
  int64_t i = 0;
  double r = 0.0;
  resize_math::TapPair<float> pair;
  (void)resize_math::source_cell(p, d, o, &i, &r);  // never outside: no tf_crop_and_resize
  resize_math::pair_taps(p, d, i, r, &pair);
  AxisTaps t;
  t.count = pair.count;
  t.index[0] = int32_t(pair.index[0]);
  t.weight[0] = pair.weight[0];
  t.index[1] = int32_t(pair.count > 1 ? pair.index[1] : pair.index[0]);
  t.weight[1] = pair.count > 1 ? pair.weight[1] : 0.f;
  return t;
}

// V elements of T from or to 16 bytes (V = 16 / sizeof(T)) or one element, as floats; Int8
// stores round and saturate as int8_tap_sum does.
template <typename T, int V>
struct Elems {
  static __device__ __forceinline__ void load(const T* p, float (&v)[V]) {
    if constexpr (V == 1) {
      if constexpr (sizeof(T) == 1) v[0] = float(*p);
      else v[0] = load_float(p, 0);
    } else {
      const uint4 u = *reinterpret_cast<const uint4*>(p);
      const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        if constexpr (sizeof(T) == 1) v[k] = float(e[k]);
        else v[k] = load_float(e, k);
      }
    }
  }
  static __device__ __forceinline__ void store(T* p, const float (&v)[V]) {
    __align__(16) T e[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if constexpr (sizeof(T) == 1) e[k] = int8_quantize(v[k], 1.f);
      else store_float(e, k, v[k]);
    }
    if constexpr (V == 1) *p = e[0];
    else *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(e);
  }
};

// V channels from c0 of output pixel (row, column taps cx) at y + yo; x_row: x's element offset
// of pixel (n, 0, 0).
template <typename T, int V>
__device__ __forceinline__ void resize_hw_elems(const T* x, T* y, const AxisTaps& ry,
                                                const AxisTaps& cx, int64_t x_row, int64_t W,
                                                int64_t C, int64_t c0, int64_t yo) {
  float acc[V];
#pragma unroll
  for (int k = 0; k < V; ++k) acc[k] = 0.f;
#pragma unroll
  for (int a = 0; a < 2; ++a) {
    if (a >= ry.count) break;
#pragma unroll
    for (int b = 0; b < 2; ++b) {
      if (b >= cx.count) break;
      const float w = ry.weight[a] * cx.weight[b];
      float v[V];
      Elems<T, V>::load(x + x_row + (int64_t(ry.index[a]) * W + cx.index[b]) * C + c0, v);
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] = fmaf(w, v[k], acc[k]);
    }
  }
  Elems<T, V>::store(y + yo, acc);
}

template <typename T>
__device__ void resize_hw(const StepPointers& ptrs, const ResizeParams& p) {
  __shared__ AxisTaps col_taps[kMaxCols];
  __shared__ AxisTaps row_taps;
  if (!resize_math::resizes_hw_only(p)) return;  // not a step this kernel fits
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t H = p.in_dims[1], W = p.in_dims[2], C = p.in_dims[3];
  const int64_t OH = p.out_dims[1], OW = p.out_dims[2];
  constexpr int kVec = 16 / int(sizeof(T));
  // y a part of a larger tensor (y_block): whole pixels of C channels, ys apart from yo (a
  // Concat along channels, written in place), placed without a division; other blocks (along
  // H, W or N) through y_index.
  const bool pixels = p.y_block == 0 || p.y_block == C;
  const int64_t ys = p.y_block == C ? p.y_block_stride : C, yo = p.y_block == C ? p.y_offset : 0;
  const bool vec = C % kVec == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(y) % 16 == 0 &&
                   (p.y_block | p.y_block_stride | p.y_offset) % kVec == 0;
  const int64_t groups = vec ? C / kVec : C;
  int64_t cols = int64_t(blockDim.x) / groups;
  cols = cols < 1 ? 1 : (cols > kMaxCols ? kMaxCols : cols);
  const int64_t col_tiles = (OW + cols - 1) / cols;
  const int64_t tiles = p.out_dims[0] * OH * col_tiles;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t row = tile / col_tiles, ox0 = (tile - row * col_tiles) * cols;
    const int64_t ncols = OW - ox0 < cols ? OW - ox0 : cols;
    __syncthreads();  // the previous tile's taps are read
    for (int64_t c = threadIdx.x; c < ncols; c += blockDim.x)
      col_taps[c] = axis_taps(p, 2, ox0 + c);
    if (threadIdx.x == blockDim.x - 1) row_taps = axis_taps(p, 1, row % OH);
    __syncthreads();
    const AxisTaps ry = row_taps;
    const int64_t x_row = (row / OH) * H * W * C, pixel0 = row * OW + ox0;
    for (int64_t item = threadIdx.x; item < ncols * groups; item += blockDim.x) {
      const int64_t c = item / groups, g = item - c * groups;
      const AxisTaps cx = col_taps[c];
      const int64_t c0 = vec ? g * kVec : g;
      const int64_t yi =
          pixels ? yo + (pixel0 + c) * ys + c0 : y_index(p, (pixel0 + c) * C + c0);
      if (vec)
        resize_hw_elems<T, kVec>(x, y, ry, cx, x_row, W, C, c0, yi);
      else
        resize_hw_elems<T, 1>(x, y, ry, cx, x_row, W, C, c0, yi);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_resize, ResizeParams, jetplan::kernels::cuda::resize)
JP_STEP_KERNEL(jp_resize_i8, ResizeParams, jetplan::kernels::cuda::resize_i8)
JP_HALF_AND_FLOAT_KERNELS(jp_resize_pixels, ResizeParams, jetplan::kernels::cuda::resize_pixels)
JP_STEP_KERNEL(jp_resize_pixels_i8, ResizeParams, jetplan::kernels::cuda::resize_pixels_i8)
JP_HALF_AND_FLOAT_KERNELS(jp_resize_hw, ResizeParams, jetplan::kernels::cuda::resize_hw)
JP_STEP_KERNEL(jp_resize_hw_i8, ResizeParams, jetplan::kernels::cuda::resize_hw<int8_t>)
