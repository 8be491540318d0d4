// Resize on the GPU, FP16, FP32 or (nearest and linear) Int8 storage, any rank (NHWC and NCHW alike: a dim that is not
// resized has scale 1): nearest (every rounding), linear and cubic, every ONNX coordinate
// transform. The twin is kernels/cpu/resize.cc; both take their taps from kernels/resize_math.h
// (source coordinates in double: nearest picks at exact halves depend on it); here the weights
// and the sum are FP32.
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
// outside(o) where tf_crop_and_resize puts the element outside the input. Dims with a single
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
// element() call with the same taps: the generic kernel's bits, and the twin's. A first step:
// the U-Net's last bilinear x2 upsample (128 channels to 256x256, H200) 0.253 -> 0.186 ms,
// still far from memory speed; the taps live in local memory (dim_taps and the rank-generic
// fold index them at run time), which a fold written out for rank 4 would avoid.
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
        store_float(y, o, tap_product_sum(p.rank, taps, in_stride,
                                          [x](int64_t offset) { return load_float(x, offset); }));
      },
      [&](int64_t o) { store_float(y, o, p.extrapolation_value); });
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
        y[o] = resize_math::int8_tap_sum(p.rank, taps, in_stride, x);
      },
      [&](int64_t o) { y[o] = 0; });
}

// The same two over pixel runs (rank 4).
template <typename T>
__device__ void resize_pixels(const StepPointers& ptrs, const ResizeParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  for_each_pixel_run(
      p,
      [&](int64_t o, const Taps* taps, const int64_t* in_stride) {
        store_float(y, o, tap_product_sum(p.rank, taps, in_stride,
                                          [x](int64_t offset) { return load_float(x, offset); }));
      },
      [&](int64_t o) { store_float(y, o, p.extrapolation_value); });
}
__device__ void resize_pixels_i8(const StepPointers& ptrs, const ResizeParams& p) {
  const int8_t* x = static_cast<const int8_t*>(ptrs.in[0]);
  int8_t* y = static_cast<int8_t*>(ptrs.out[0]);
  for_each_pixel_run(
      p,
      [&](int64_t o, const Taps* taps, const int64_t* in_stride) {
        y[o] = resize_math::int8_tap_sum(p.rank, taps, in_stride, x);
      },
      [&](int64_t o) { y[o] = 0; });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_resize, ResizeParams, jetplan::kernels::cuda::resize)
JP_STEP_KERNEL(jp_resize_i8, ResizeParams, jetplan::kernels::cuda::resize_i8)
JP_HALF_AND_FLOAT_KERNELS(jp_resize_pixels, ResizeParams, jetplan::kernels::cuda::resize_pixels)
JP_STEP_KERNEL(jp_resize_pixels_i8, ResizeParams, jetplan::kernels::cuda::resize_pixels_i8)
