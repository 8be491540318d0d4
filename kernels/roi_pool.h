// The RoiPool family (ONNX RoiAlign, opsets 10, 16 and 22, and MaxRoiPool): parameters, the
// per-output math the CPU twin (kernels/cpu/roi_pool.cc) and the CUDA kernels
// (kernels/cuda/roi_pool.cu) share, and the twin's signature.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/rounded_float.h"

namespace jetplan::kernels {

// kAlignAvg, kAlignMax: RoiAlign's modes avg and max; kMax: MaxRoiPool.
enum class RoiPoolMode : uint8_t { kAlignAvg = 0, kAlignMax = 1, kMax = 2 };
constexpr int kRoiPoolModeCount = 3;
// RoiAlign's samples per bin along one dim: sampling_ratio at most this (the converter refuses
// more), and an adaptive grid (ceil(box extent / bins)) cut to it. ONNX Runtime takes the
// adaptive grid uncut; it differs only for a box over 1024 output bins' worth of pixels (or an
// infinite one, where it would never finish).
constexpr int64_t kRoiAlignMaxGrid = 1024;

// X [batch, channels, height, width] (NCHW), dense. RoiAlign: rois [rois, 4] (x1, y1, x2, y2)
// and batch indices [rois] (int64); MaxRoiPool: rois [rois, 5] (batch index, x1, y1, x2, y2).
// Y [rois, channels, out_h, out_w]. A box whose batch index lies outside [0, batch) gives zeros
// (ONNX Runtime refuses the run; a plan's run cannot fail), read nowhere.
struct RoiPoolParams {
  RoiPoolMode mode = RoiPoolMode::kAlignAvg;
  bool half_pixel = false;     // RoiAlign coordinate_transformation_mode half_pixel
  int64_t sampling_ratio = 0;  // RoiAlign: 0 (adaptive) to kRoiAlignMaxGrid
  float spatial_scale = 1.f;
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;  // >= 1 (and width) when Y has elements
  int64_t width = 1;
  int64_t rois = 0;
  int64_t out_h = 1;
  int64_t out_w = 1;
};

JP_HD_INLINE int64_t roi_pool_outputs(const RoiPoolParams& p) {
  return p.rois * p.channels * p.out_h * p.out_w;
}
JP_HD_INLINE int64_t roi_pool_roi_columns(const RoiPoolParams& p) {
  return p.mode == RoiPoolMode::kMax ? 5 : 4;
}

// ONNX's reference (onnx/reference/ops/op_roi_align.py; ONNX Runtime's roialign.cc gives the
// same bits) in float32 and its operation order; MaxRoiPool as ONNX Runtime's roi_pool.cc. Each
// product, sum and quotient is rounded on its own (nvcc would otherwise contract a * b + c into
// one fmaf), so the twin and the kernels agree bit for bit on Float32.
namespace roi_pool_math {

using rounded::add;
using rounded::div;
using rounded::mul;
using rounded::sub;

// std::max(a, b) (and Python's max(a, b) with b first): b only when a < b, so a NaN in a stays.
JP_HD_INLINE float max_of(float a, float b) { return a < b ? b : a; }

// One RoiAlign box: its batch (-1: outside [0, N)), start, bin size and sampling grid.
struct AlignBox {
  int64_t batch;
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
  float count;  // the average's divisor, max(grid_h * grid_w, 1)
};

// ceil(extent) samples, none for an empty, negative or NaN extent (whose loops ONNX runs zero
// times), at most kRoiAlignMaxGrid.
JP_HD_INLINE int64_t adaptive_grid(float extent) {
  const float g = ceilf(extent);
  if (!(g > 0.f)) return 0;
  return g > static_cast<float>(kRoiAlignMaxGrid) ? kRoiAlignMaxGrid : static_cast<int64_t>(g);
}

JP_HD_INLINE AlignBox align_box(const RoiPoolParams& p, const float* rois,
                                const int64_t* batch_indices, int64_t r) {
  AlignBox b;
  const int64_t n = batch_indices[r];
  b.batch = n >= 0 && n < p.batch ? n : -1;
  const float* roi = rois + r * 4;
  const float offset = p.half_pixel ? 0.5f : 0.f;
  b.start_w = sub(mul(roi[0], p.spatial_scale), offset);
  b.start_h = sub(mul(roi[1], p.spatial_scale), offset);
  const float end_w = sub(mul(roi[2], p.spatial_scale), offset);
  const float end_h = sub(mul(roi[3], p.spatial_scale), offset);
  float roi_w = sub(end_w, b.start_w), roi_h = sub(end_h, b.start_h);
  if (!p.half_pixel) {  // malformed boxes become 1x1
    roi_w = max_of(roi_w, 1.f);
    roi_h = max_of(roi_h, 1.f);
  }
  b.bin_h = div(roi_h, static_cast<float>(p.out_h));
  b.bin_w = div(roi_w, static_cast<float>(p.out_w));
  b.grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : adaptive_grid(b.bin_h);
  b.grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : adaptive_grid(b.bin_w);
  const int64_t count = b.grid_h * b.grid_w;
  b.count = static_cast<float>(count > 1 ? count : 1);
  return b;
}

// The four taps of one bilinear sample (offsets into one channel's plane) and their weights. A
// sample outside [-1, H] x [-1, W] (or NaN) reads offset 0 with weight 0, as ONNX does.
struct AlignSample {
  int64_t pos[4];
  float w[4];
};

JP_HD_INLINE void align_sample(const RoiPoolParams& p, const AlignBox& b, int64_t ph, int64_t pw,
                               int64_t iy, int64_t ix, AlignSample* s) {
  float y = add(add(b.start_h, mul(static_cast<float>(ph), b.bin_h)),
                div(mul(static_cast<float>(iy) + 0.5f, b.bin_h), static_cast<float>(b.grid_h)));
  float x = add(add(b.start_w, mul(static_cast<float>(pw), b.bin_w)),
                div(mul(static_cast<float>(ix) + 0.5f, b.bin_w), static_cast<float>(b.grid_w)));
  const float h = static_cast<float>(p.height), w = static_cast<float>(p.width);
  if (!(y >= -1.f && y <= h && x >= -1.f && x <= w)) {
    for (int k = 0; k < 4; ++k) {
      s->pos[k] = 0;
      s->w[k] = 0.f;
    }
    return;
  }
  if (y < 0.f) y = 0.f;
  if (x < 0.f) x = 0.f;
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= p.height - 1) {
    y_high = y_low = p.height - 1;
    y = static_cast<float>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= p.width - 1) {
    x_high = x_low = p.width - 1;
    x = static_cast<float>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const float ly = sub(y, static_cast<float>(y_low)), lx = sub(x, static_cast<float>(x_low));
  const float hy = sub(1.f, ly), hx = sub(1.f, lx);
  s->pos[0] = y_low * p.width + x_low;
  s->pos[1] = y_low * p.width + x_high;
  s->pos[2] = y_high * p.width + x_low;
  s->pos[3] = y_high * p.width + x_high;
  s->w[0] = mul(hy, hx);
  s->w[1] = mul(hy, lx);
  s->w[2] = mul(ly, hx);
  s->w[3] = mul(ly, lx);
}

// RoiAlign's bin (ph, pw) of box b in one channel's plane (load(offset) reads it as a float):
// avg sums each sample's weighted taps and divides by the count; max takes, per sample, the
// largest weighted tap w_i * v_i (not the interpolated value: ONNX's and ONNX Runtime's
// definition), then the largest over the samples. No samples give 0.
template <typename Load>
JP_HD_INLINE float align_bin(const RoiPoolParams& p, const AlignBox& b, int64_t ph, int64_t pw,
                             Load load) {
  const bool avg = p.mode == RoiPoolMode::kAlignAvg;
  float out = 0.f;
  bool first = true;
  AlignSample s;
  for (int64_t iy = 0; iy < b.grid_h; ++iy)
    for (int64_t ix = 0; ix < b.grid_w; ++ix) {
      align_sample(p, b, ph, pw, iy, ix, &s);
      const float t0 = mul(s.w[0], load(s.pos[0])), t1 = mul(s.w[1], load(s.pos[1]));
      const float t2 = mul(s.w[2], load(s.pos[2])), t3 = mul(s.w[3], load(s.pos[3]));
      if (avg) {
        out = add(out, add(add(add(t0, t1), t2), t3));
        continue;
      }
      const float v = max_of(max_of(max_of(t0, t1), t2), t3);
      out = first ? v : max_of(out, v);
      first = false;
    }
  return avg ? div(out, b.count) : out;
}

// An integral float as an index far outside any tensor when it is not within +-2^30; NaN
// reads like the lowest.
JP_HD_INLINE int64_t to_coord(float f) {
  constexpr float kFar = 1073741824.f;
  if (!(f >= -kFar)) return -int64_t{1073741824};
  if (f > kFar) return int64_t{1073741824};
  return static_cast<int64_t>(f);
}

// MaxRoiPool's box r: its batch (the first column truncated, as ONNX Runtime's int cast; -1
// outside [0, N)), its corners rounded half away from zero after scaling, and its bin size.
struct MaxBox {
  int64_t batch;
  int64_t start_h, start_w;
  float bin_h, bin_w;
};

JP_HD_INLINE MaxBox max_box(const RoiPoolParams& p, const float* rois, int64_t r) {
  MaxBox b;
  const float* roi = rois + r * 5;
  b.batch = roi[0] > -1.f && roi[0] < static_cast<float>(p.batch) ? static_cast<int64_t>(roi[0])
                                                                    : -1;
  b.start_w = to_coord(roundf(mul(roi[1], p.spatial_scale)));
  b.start_h = to_coord(roundf(mul(roi[2], p.spatial_scale)));
  const int64_t end_w = to_coord(roundf(mul(roi[3], p.spatial_scale)));
  const int64_t end_h = to_coord(roundf(mul(roi[4], p.spatial_scale)));
  const int64_t roi_h = end_h - b.start_h + 1 > 1 ? end_h - b.start_h + 1 : 1;
  const int64_t roi_w = end_w - b.start_w + 1 > 1 ? end_w - b.start_w + 1 : 1;
  b.bin_h = div(static_cast<float>(roi_h), static_cast<float>(p.out_h));
  b.bin_w = div(static_cast<float>(roi_w), static_cast<float>(p.out_w));
  return b;
}

JP_HD_INLINE int64_t clamp_to(int64_t v, int64_t hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

// MaxRoiPool's bin (ph, pw): the largest element of its window (floor(ph * bin) to
// ceil((ph + 1) * bin) from the box's start, clipped to X), 0 for an empty window. NaNs are
// skipped (never larger); a window of NaNs only gives -FLT_MAX.
template <typename Load>
JP_HD_INLINE float max_bin(const RoiPoolParams& p, const MaxBox& b, int64_t ph, int64_t pw,
                           Load load) {
  const int64_t h0 = clamp_to(
      static_cast<int64_t>(floorf(mul(static_cast<float>(ph), b.bin_h))) + b.start_h, p.height);
  const int64_t h1 = clamp_to(
      static_cast<int64_t>(ceilf(mul(static_cast<float>(ph + 1), b.bin_h))) + b.start_h, p.height);
  const int64_t w0 = clamp_to(
      static_cast<int64_t>(floorf(mul(static_cast<float>(pw), b.bin_w))) + b.start_w, p.width);
  const int64_t w1 = clamp_to(
      static_cast<int64_t>(ceilf(mul(static_cast<float>(pw + 1), b.bin_w))) + b.start_w, p.width);
  if (h1 <= h0 || w1 <= w0) return 0.f;
  float out = -3.402823466e+38f;
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t w = w0; w < w1; ++w) {
      const float v = load(h * p.width + w);
      if (v > out) out = v;
    }
  return out;
}

// Output element i of Y ([rois, channels, out_h, out_w], row-major); load(offset) reads X's
// element at `offset` as a float. batch_indices: RoiAlign's (null for MaxRoiPool).
template <typename Load>
JP_HD_INLINE float output(const RoiPoolParams& p, const float* rois,
                          const int64_t* batch_indices, int64_t i, Load load) {
  const int64_t pw = i % p.out_w;
  const int64_t ph = (i / p.out_w) % p.out_h;
  const int64_t c = (i / (p.out_w * p.out_h)) % p.channels;
  const int64_t r = i / (p.out_w * p.out_h * p.channels);
  const int64_t plane = p.height * p.width;
  if (p.mode == RoiPoolMode::kMax) {
    const MaxBox b = max_box(p, rois, r);
    if (b.batch < 0) return 0.f;
    const int64_t base = (b.batch * p.channels + c) * plane;
    return max_bin(p, b, ph, pw, [&](int64_t offset) { return load(base + offset); });
  }
  const AlignBox b = align_box(p, rois, batch_indices, r);
  if (b.batch < 0) return 0.f;
  const int64_t base = (b.batch * p.channels + c) * plane;
  return align_bin(p, b, ph, pw, [&](int64_t offset) { return load(base + offset); });
}

}  // namespace roi_pool_math
}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// Float32 X, rois and Y; batch_indices int64 (RoiAlign) or null (MaxRoiPool). The CUDA kernels
// also read Float16 X, writing Float16 Y; rois stay Float32.
void roi_pool(const RoiPoolParams& p, const float* x, const float* rois,
              const int64_t* batch_indices, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/roi_pool.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS). X's
// dtype names the row; rois are Float32 and batch indices Int64 in both.
#define JP_CUDA_VARIANTS_roi_pool(X, F) \
  X(F, jp_roi_pool_f16, kF16, 0)        \
  X(F, jp_roi_pool_f32, kF32, 0)
