// The coordinate math of Resize, shared by the CPU twin (kernels/cpu/resize.cc) and the CUDA
// kernel (kernels/cuda/resize.cu): where each output coordinate of one dim reads the input, and
// with which weights. Source coordinates and weights are computed in double, in the operation
// order of the ONNX reference (nearest picks at exact halves depend on it); `Weight` is what a
// tap keeps: double on the CPU, float on the GPU (which sums in FP32).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/int8_epilogue.h"
#include "kernels/resize.h"

namespace jetplan::kernels::resize_math {

constexpr int kMaxTaps = 4;  // cubic

// The input elements one output coordinate of one dim reads, with their 1D weights.
template <typename Weight>
struct Taps {
  int64_t index[kMaxTaps];
  Weight weight[kMaxTaps];
  int count;
};

// ONNX coordinate_transformation_mode, in double, in the operation order of the ONNX reference.
JP_HD inline double source_coordinate(const ResizeParams& p, int d, int64_t o) {
  const double x = static_cast<double>(o);
  const double in = static_cast<double>(p.in_dims[d]);
  const double len = p.resized_length[d];
  const double s = p.scale[d];
  switch (p.coord) {
    case ResizeCoord::kHalfPixel:
      return (x + 0.5) / s - 0.5;
    case ResizeCoord::kPytorchHalfPixel:
      return len > 1 ? (x + 0.5) / s - 0.5 : 0.0;
    case ResizeCoord::kAlignCorners:
      return len > 1 ? x * (in - 1) / (len - 1) : 0.0;
    case ResizeCoord::kAsymmetric:
      return x / s;
    case ResizeCoord::kTfCropAndResize: {
      const double start = p.roi_start[d], end = p.roi_end[d];
      const double offset = start * (in - 1);
      if (len > 1) return x * (end - start) * (in - 1) / (len - 1) + offset;
      return (end - start) * (in - 1) / 2 + offset;
    }
    case ResizeCoord::kTfHalfPixelForNn:
      return (x + 0.5) / s;
  }
  return 0.0;
}

// Keys' cubic convolution kernel at distance t in [0, 2], written as ONNX's reference writes it.
JP_HD inline double cubic_weight(double t, double a) {
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
}

// Appends tap (index, weight) unless the weight is 0; the index is clamped to the edge.
template <typename Weight>
JP_HD inline void add_tap(Taps<Weight>* t, int64_t index, double weight, int64_t size) {
  if (weight == 0.0) return;
  t->index[t->count] = index < 0 ? 0 : (index >= size ? size - 1 : index);
  t->weight[t->count] = static_cast<Weight>(weight);
  ++t->count;
}

// The at most two taps of nearest and linear modes in fixed slots (what dim_taps keeps for
// them, in its order): a kernel indexing them by constants keeps them in registers, where
// Taps' arrays, filled at run-time positions, go to local memory.
template <typename Weight>
struct TapPair {
  int64_t index[2];
  Weight weight[2];
  int count;  // 1 or 2 (a tap of weight exactly 0 is dropped, as add_tap drops it)
};

// Where output coordinate o of dim d reads: the source coordinate, clamped, as its floor *i
// and the fraction *r in [0, 1). False when tf_crop_and_resize puts the coordinate outside the
// input (the output element is then the extrapolation value).
JP_HD inline bool source_cell(const ResizeParams& p, int d, int64_t o, int64_t* i, double* r) {
  const int64_t size = p.in_dims[d];
  double c = source_coordinate(p, d, o);
  if (p.coord == ResizeCoord::kTfCropAndResize && (c < 0 || c > static_cast<double>(size - 1)))
    return false;
  // For valid parameters c lies in [-0.5, size]; the clamp only keeps the conversion to int64
  // defined for absurd ones (every tap then reads the same edge element).
  c = std::fmin(std::fmax(c, -4.0), static_cast<double>(size) + 4.0);
  const double base = std::floor(c);
  *r = c - base;
  *i = static_cast<int64_t>(base);
  return true;
}

// The nearest (p.mode kNearest) or linear (otherwise) taps of cell (i, r) of dim d.
template <typename Weight>
JP_HD inline void pair_taps(const ResizeParams& p, int d, int64_t i, double r,
                            TapPair<Weight>* t) {
  const int64_t size = p.in_dims[d];
  t->count = 0;
  auto add = [&](int64_t index, double weight) {  // add_tap, into slot 0 or 1
    if (weight == 0.0) return;
    const int64_t clamped = index < 0 ? 0 : (index >= size ? size - 1 : index);
    if (t->count == 0) {
      t->index[0] = clamped;
      t->weight[0] = static_cast<Weight>(weight);
    } else {
      t->index[1] = clamped;
      t->weight[1] = static_cast<Weight>(weight);
    }
    ++t->count;
  };
  if (p.mode == ResizeMode::kNearest) {
    bool up = false;
    switch (p.nearest) {
      case ResizeNearest::kRoundPreferFloor: up = r > 0.5; break;
      case ResizeNearest::kRoundPreferCeil: up = r >= 0.5; break;
      case ResizeNearest::kFloor: up = false; break;
      case ResizeNearest::kCeil: up = r > 0; break;
    }
    add(up ? i + 1 : i, 1.0);
    return;
  }
  add(i, 1.0 - r);
  add(i + 1, r);
}

// The taps of output coordinate o of dim d. False when tf_crop_and_resize puts the coordinate
// outside the input: the output element is then the extrapolation value (and t->count is 0).
template <typename Weight>
JP_HD inline bool dim_taps(const ResizeParams& p, int d, int64_t o, Taps<Weight>* t) {
  const int64_t size = p.in_dims[d];
  t->count = 0;
  int64_t i = 0;
  double r = 0.0;
  if (!source_cell(p, d, o, &i, &r)) return false;
  switch (p.mode) {
    case ResizeMode::kNearest:
    case ResizeMode::kLinear: {
      TapPair<Weight> pair;
      pair_taps(p, d, i, r, &pair);
      for (int k = 0; k < pair.count; ++k) {
        t->index[k] = pair.index[k];
        t->weight[k] = pair.weight[k];
      }
      t->count = pair.count;
      return true;
    }
    case ResizeMode::kCubic: {
      const double a = p.cubic_coeff_a;
      const double w[kMaxTaps] = {cubic_weight(r + 1, a), cubic_weight(r, a),
                                  cubic_weight(1 - r, a), cubic_weight(2 - r, a)};
      double kept = 0.0;
      for (int k = 0; k < kMaxTaps; ++k) {
        const int64_t idx = i - 1 + k;
        if (!p.exclude_outside || (idx >= 0 && idx < size)) kept += w[k];
      }
      for (int k = 0; k < kMaxTaps; ++k) {
        const int64_t idx = i - 1 + k;
        if (p.exclude_outside && (idx < 0 || idx >= size)) continue;
        add_tap(t, idx, p.exclude_outside ? w[k] / kept : w[k], size);
      }
      return true;
    }
  }
  return true;
}

// A rank-4 Resize of dims 1 and 2 only (an NHWC image's H and W), nearest or linear: dims 0
// and 3 keep their extent with scale 1 and resized_length their extent, in a coordinate mode
// that maps a kept dim onto itself (c = x exactly in double: not tf_crop_and_resize, which moves
// it by its roi, nor tf_half_pixel_for_nn, by half a pixel), so each has one tap, the output
// coordinate itself, of weight 1; extents below 2^31. The CUDA jp_resize_hw_* kernels take
// these steps (the same bits as the rank-generic fold: 1 * 1 * wy * wx * 1 is wy * wx).
JP_HD inline bool resizes_hw_only(const ResizeParams& p) {
  if (p.rank != 4 || (p.mode != ResizeMode::kNearest && p.mode != ResizeMode::kLinear) ||
      p.coord == ResizeCoord::kTfCropAndResize || p.coord == ResizeCoord::kTfHalfPixelForNn)
    return false;
  for (int d = 0; d < 4; ++d)
    if (p.in_dims[d] < 1 || p.out_dims[d] < 1 || p.in_dims[d] >= (int64_t{1} << 31) ||
        p.out_dims[d] >= (int64_t{1} << 31))
      return false;
  const int kept[2] = {0, 3};
  for (int d : kept)
    if (p.out_dims[d] != p.in_dims[d] || p.scale[d] != 1.0 ||
        p.resized_length[d] != static_cast<double>(p.in_dims[d]))
      return false;
  return true;
}

// Folds the product of every dim's taps, dim 0 outermost and each dim's taps in increasing
// index order (the twin's and the kernel's one order): acc = add(acc, weight, offset) from 0,
// where weight is the taps' weights multiplied left to right over the dims and offset the
// tapped element's (in_stride: x's element strides).
template <typename Weight, typename Add>
JP_HD inline Weight tap_product_fold(int rank, const Taps<Weight>* taps, const int64_t* in_stride,
                                     Add add) {
  Weight acc = 0;
  int pick[kMaxRank] = {};  // tap chosen in each dim, odometer over the tap product
  for (;;) {
    Weight weight = 1;
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      weight *= taps[d].weight[pick[d]];
      offset += taps[d].index[pick[d]] * in_stride[d];
    }
    acc = add(acc, weight, offset);
    int d = rank - 1;
    while (d >= 0 && ++pick[d] == taps[d].count) pick[d--] = 0;
    if (d < 0) break;
  }
  return acc;
}

// The sum over the tap product of weight * x at the tapped offset. Weight is also the sum's
// type; load(offset) reads x.
template <typename Weight, typename Load>
JP_HD inline Weight tap_product_sum(int rank, const Taps<Weight>* taps, const int64_t* in_stride,
                                    Load load) {
  return tap_product_fold(rank, taps, in_stride, [&load](Weight acc, Weight w, int64_t offset) {
    return acc + w * load(offset);
  });
}

// An Int8 output of Int8 x in x's scale (an INT8 plan's nearest or linear Resize; not
// tf_crop_and_resize, whose extrapolation value has no Int8 form): over the tap product, the
// taps' float weights (each the double weight rounded once) multiplied over the dims, each
// product times its input integer added with fmaf, then rounded half to even and saturated to
// [-128, 127]. Every operation is correctly rounded on both sides and written out (no
// contraction left to a compiler), so the CPU twin and the CUDA kernel give the same bits.
// Nearest has one tap of weight 1: the input integer exactly. Linear weights are in [0, 1] and
// sum to 1, so the output stays in the input's range (the scale needs no change) and differs
// from the exact interpolation by float rounding only.
JP_HD inline int8_t int8_tap_sum(int rank, const Taps<float>* taps, const int64_t* in_stride,
                                 const int8_t* x) {
  const float acc =
      tap_product_fold(rank, taps, in_stride, [x](float sum, float w, int64_t offset) {
        return fmaf(w, static_cast<float>(x[offset]), sum);
      });
  return int8_quantize(acc, 1.f);
}

}  // namespace jetplan::kernels::resize_math
