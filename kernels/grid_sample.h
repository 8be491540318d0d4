// The GridSample family (ONNX GridSample, opsets 16, 20 and 22): parameters, the sampling math
// the CPU twin (kernels/cpu/grid_sample.cc) and the CUDA kernels (kernels/cuda/grid_sample.cu)
// share, and the twin's signature.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/rounded_float.h"

namespace jetplan::kernels {

enum class GridSampleMode : uint8_t { kLinear = 0, kNearest = 1, kCubic = 2 };
constexpr int kGridSampleModeCount = 3;
enum class GridSamplePadding : uint8_t { kZeros = 0, kBorder = 1, kReflection = 2 };
constexpr int kGridSamplePaddingCount = 3;
constexpr int kGridSampleMaxSpatial = 3;

// X [batch, channels, *in] (NCHW), grid [batch, *out, spatial] and Y [batch, channels, *out],
// dense. `in` and `out` hold the spatial extents right-aligned in kGridSampleMaxSpatial dims
// (D, H, W), a leading 1 for each dim X lacks: such a dim has one tap of index 0 and weight 1,
// so every step runs as 3-D. grid[..., 0] is x (the last dim, W), [..., 1] y, [..., 2] z.
struct GridSampleParams {
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  bool align_corners = false;
  int32_t spatial = 2;  // 1..kGridSampleMaxSpatial
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t in[kGridSampleMaxSpatial] = {1, 1, 1};   // every extent >= 1 when Y has elements
  int64_t out[kGridSampleMaxSpatial] = {1, 1, 1};
};

// Sampling positions of one image (out[0] * out[1] * out[2]) and pixels of one input plane.
JP_HD_INLINE int64_t grid_sample_positions(const GridSampleParams& p) {
  return p.out[0] * p.out[1] * p.out[2];
}
JP_HD_INLINE int64_t grid_sample_plane(const GridSampleParams& p) {
  return p.in[0] * p.in[1] * p.in[2];
}

// The math of ONNX's reference (onnx/reference/ops/op_grid_sample.py), in float32 as it computes
// with float32 tensors, in its operation order. Each product and sum is rounded on its own
// (nvcc would otherwise contract a * b + c into one fmaf; the twin is ISO C++, which does not),
// so the twin and the kernels compute the same taps, weights and sums bit for bit: a nearest
// pick at an exact half depends on them.
namespace grid_sample_math {

using rounded::add;
using rounded::mul;
using rounded::sub;

constexpr int kMaxTaps = 4;  // cubic


// The input elements one sampling position reads along one dim: index -1 for a zero of 'zeros'
// padding, else within [0, extent).
struct Taps {
  int64_t index[kMaxTaps];
  float weight[kMaxTaps];
  int count;
};

// Normalized g in [-1, 1] to the pixel coordinate of a dim of `len` samples.
JP_HD_INLINE float denormalize(float g, int64_t len, bool align_corners) {
  const float l = static_cast<float>(len);
  if (align_corners) return mul(add(g, 1.f) / 2.f, sub(l, 1.f));
  return sub(mul(add(g, 1.f), l), 1.f) / 2.f;
}

// Reflects x by the borders lo and hi until it is within them (ONNX's _gs_reflect). A dim of one
// sample under align_corners has lo == hi, where the reference divides by zero: x becomes lo,
// as PyTorch's reflect_coordinates gives.
JP_HD_INLINE float reflect(float x, float lo, float hi) {
  const float span = sub(hi, lo);
  if (!(span > 0.f)) return lo;
  if (x < lo) {
    const float dx = sub(lo, x);
    const float n = floorf(dx / span);
    const float r = sub(dx, mul(n, span));
    return fmodf(n, 2.f) == 0.f ? add(lo, r) : sub(hi, r);
  }
  if (x > hi) {
    const float dx = sub(x, hi);
    const float n = floorf(dx / span);
    const float r = sub(dx, mul(n, span));
    return fmodf(n, 2.f) == 0.f ? sub(hi, r) : add(lo, r);
  }
  return x;
}

// An integral float (or NaN, or an infinity) as an index far outside any tensor when it is not
// within +-2^30: NaN reads like an index below 0.
JP_HD_INLINE int64_t to_index(float f) {
  constexpr float kFar = 1073741824.f;
  if (!(f >= -kFar)) return -int64_t{1073741824};
  if (f > kFar) return int64_t{1073741824};
  return static_cast<int64_t>(f);
}

// Tap index i of a dim of `len` samples under the padding: -1 (zeros) or the index read.
// Reflection of an integer index by ONNX's borders (-0.5 and len - 0.5; 0 and len - 1 under
// align_corners) is periodic: 2 len with the edge sample repeated, 2 (len - 1) without.
JP_HD_INLINE int64_t padded_index(GridSamplePadding padding, bool align_corners, int64_t i,
                                  int64_t len) {
  switch (padding) {
    case GridSamplePadding::kZeros: return i >= 0 && i < len ? i : -1;
    case GridSamplePadding::kBorder: return i < 0 ? 0 : (i >= len ? len - 1 : i);
    case GridSamplePadding::kReflection: {
      if (align_corners) {
        if (len <= 1) return 0;
        const int64_t period = 2 * (len - 1);
        int64_t m = i % period;
        if (m < 0) m += period;
        return m <= len - 1 ? m : period - m;
      }
      const int64_t period = 2 * len;
      int64_t m = i % period;
      if (m < 0) m += period;
      return m < len ? m : period - 1 - m;
    }
  }
  return -1;
}

// Keys' cubic convolution weights (a = -0.75) of the four taps around a sample at fraction s,
// written as ONNX's _gs_get_cubic_coeffs writes them.
JP_HD_INLINE void cubic_weights(float s, float* w) {
  const float a = -0.75f;
  const float s1 = add(s, 1.f), s2 = sub(2.f, s), s3 = sub(1.f, s);
  w[0] = sub(mul(add(mul(sub(mul(a, s1), 5.f * a), s1), 8.f * a), s1), 4.f * a);
  w[1] = add(mul(mul(sub(mul(a + 2.f, s), a + 3.f), s), s), 1.f);
  w[2] = add(mul(mul(sub(mul(a + 2.f, s3), a + 3.f), s3), s3), 1.f);
  w[3] = sub(mul(add(mul(sub(mul(a, s2), 5.f * a), s2), 8.f * a), s2), 4.f * a);
}

// The taps of spatial dim d (of the right-aligned three) for normalized coordinate g: the
// coordinate denormalized, rounded half to even (nearest), moved inside the borders when it
// lies outside them (border: clamped to [0, len - 1]; reflection: reflected), then its taps,
// each index padded again.
JP_HD_INLINE void dim_taps(const GridSampleParams& p, int d, float g, Taps* t) {
  const int64_t len = p.in[d];
  const float l = static_cast<float>(len);
  float x = denormalize(g, len, p.align_corners);
  const float lo = p.align_corners ? 0.f : -0.5f;
  const float hi = p.align_corners ? sub(l, 1.f) : sub(l, 0.5f);
  if (p.mode == GridSampleMode::kNearest) x = rintf(x);
  if (x < lo || x > hi) {
    if (p.padding == GridSamplePadding::kBorder) {
      const float top = sub(l, 1.f);
      x = x < 0.f ? 0.f : (x > top ? top : x);
    } else if (p.padding == GridSamplePadding::kReflection) {
      x = reflect(x, lo, hi);
    }
  }
  if (p.mode == GridSampleMode::kNearest) {
    t->count = 1;
    t->index[0] = padded_index(p.padding, p.align_corners, to_index(x), len);
    t->weight[0] = 1.f;
    return;
  }
  const float f = floorf(x);
  const float s = sub(x, f);
  const int64_t base = to_index(f);
  if (p.mode == GridSampleMode::kLinear) {
    t->count = 2;
    t->weight[0] = sub(1.f, s);
    t->weight[1] = s;
    for (int k = 0; k < 2; ++k)
      t->index[k] = padded_index(p.padding, p.align_corners, base + k, len);
    return;
  }
  t->count = 4;
  cubic_weights(s, t->weight);
  for (int k = 0; k < 4; ++k)
    t->index[k] = padded_index(p.padding, p.align_corners, base - 1 + k, len);
}

// The taps of the three dims of sampling position `pos` of image n: grid holds `spatial`
// coordinates per position, x first.
JP_HD_INLINE void position_taps(const GridSampleParams& p, const float* grid, int64_t n,
                                int64_t pos, Taps* taps) {
  const float* g = grid + (n * grid_sample_positions(p) + pos) * p.spatial;
  for (int d = 0; d < kGridSampleMaxSpatial; ++d) {
    if (d < kGridSampleMaxSpatial - p.spatial) {
      taps[d].count = 1;
      taps[d].index[0] = 0;
      taps[d].weight[0] = 1.f;
      continue;
    }
    dim_taps(p, d, g[kGridSampleMaxSpatial - 1 - d], &taps[d]);
  }
}

// The weighted sum over the taps of one input plane, the last dim innermost as the reference
// interpolates (each row along W, then those along H, then along D); load(offset) reads the
// plane's element at `offset` as a float. Every tap is read, as the reference reads it (a zero
// weight still meets an infinity).
template <typename Load>
JP_HD_INLINE float sample(const GridSampleParams& p, const Taps* taps, Load load) {
  float acc0 = 0.f;
  for (int a = 0; a < taps[0].count; ++a) {
    float acc1 = 0.f;
    for (int b = 0; b < taps[1].count; ++b) {
      float acc2 = 0.f;
      for (int c = 0; c < taps[2].count; ++c) {
        const int64_t i0 = taps[0].index[a], i1 = taps[1].index[b], i2 = taps[2].index[c];
        const float v = i0 < 0 || i1 < 0 || i2 < 0 ? 0.f : load((i0 * p.in[1] + i1) * p.in[2] + i2);
        acc2 = add(acc2, mul(taps[2].weight[c], v));
      }
      acc1 = add(acc1, mul(taps[1].weight[b], acc2));
    }
    acc0 = add(acc0, mul(taps[0].weight[a], acc1));
  }
  return acc0;
}

}  // namespace grid_sample_math
}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// Float32 X, grid and Y (the CUDA kernels also read Float16 X, writing Float16 Y). A NaN
// coordinate gives NaN in linear and cubic modes and reads like one below the first sample in
// nearest mode.
void grid_sample(const GridSampleParams& p, const float* x, const float* grid, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/grid_sample.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS). X's
// dtype names the row; the grid is Float32 in both.
#define JP_CUDA_VARIANTS_grid_sample(X, F) \
  X(F, jp_grid_sample_f16, kF16, 0) \
  X(F, jp_grid_sample_f32, kF32, 0)
