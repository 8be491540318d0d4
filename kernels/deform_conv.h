// The DeformConv family (ONNX DeformConv, 2-D): parameters, the sampling both implementations
// share, and the CPU twin (kernels/cpu/deform_conv.cc); CUDA kernels in kernels/cuda/deform_conv.cu.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/host_device.h"

namespace jetplan::kernels {

// y[n, oc, oh, ow] = b[oc] + sum over the input channels c of oc's group and the taps (kh, kw),
// in that order (c, then kh, then kw: w's own order), of w[oc, c - group start, kh, kw] *
// mask[n, g * KH * KW + kh * KW + kw, oh, ow] * x sampled at
//   h = oh * stride_h - pad_top + kh * dilation_h + offset[n, 2 (g * KH * KW + kh * KW + kw), oh, ow]
//   w = ow * stride_w - pad_left + kw * dilation_w + offset[n, 2 (...) + 1, oh, ow]
// where g = c / (C / offset_groups) is c's offset group: bilinearly between the four pixels
// around (h, w), a pixel outside x counting as zero (ONNX's reference: GridSample with
// align_corners and zero padding). Every tensor NCHW, dense; mask 1 without has_mask, b 0
// without has_bias. Products and sums in float32 (float16 tensors converted on load).
struct DeformConvParams {
  DType dtype = DType::kFloat32;  // of every tensor: Float32, or Float16 (CUDA)
  int64_t batch = 1, in_channels = 1, out_channels = 1;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1, offset_groups = 1;
  bool has_bias = false, has_mask = false;
};

// K of one group's GEMM: its input channels times the taps.
JP_HD_INLINE int64_t deform_conv_k(const DeformConvParams& p) {
  return p.in_channels / p.groups * p.kernel_h * p.kernel_w;
}

// x's plane (H x W, of `load`'s element type) at (h, w): the bilinear blend of the four
// pixels around it, those outside the plane zero; zero when (h, w) is outside (-1, H) x (-1, W)
// or not a number.
template <typename Load>
JP_HD_INLINE float deform_conv_bilinear(Load load, int64_t H, int64_t W, float h, float w) {
  if (!(h > -1.f && h < float(H) && w > -1.f && w < float(W))) return 0.f;
  const float hf = floorf(h), wf = floorf(w);
  const int64_t h0 = int64_t(hf), w0 = int64_t(wf);
  const float lh = h - hf, lw = w - wf;
  float v = 0.f;
  if (h0 >= 0 && w0 >= 0) v += (1.f - lh) * (1.f - lw) * load(h0 * W + w0);
  if (h0 >= 0 && w0 + 1 < W) v += (1.f - lh) * lw * load(h0 * W + w0 + 1);
  if (h0 + 1 < H && w0 >= 0) v += lh * (1.f - lw) * load((h0 + 1) * W + w0);
  if (h0 + 1 < H && w0 + 1 < W) v += lh * lw * load((h0 + 1) * W + w0 + 1);
  return v;
}

// Element k of group g's K (input channel g * C / groups + k / (KH * KW), then the tap
// k % (KH * KW)): what sampling it needs but the pixel. Decoded once per k (a GPU stage's K
// element serves four pixels; the twin's pixel loop reuses nothing else).
struct DeformConvTap {
  int64_t x_plane;   // c * H * W: channel c's plane in image 0
  int64_t channel;   // og * KH * KW + tap: the mask's channel, the offsets' pair, in image 0
  int64_t h0, w0;    // kh * dilation_h, kw * dilation_w
};
JP_HD_INLINE DeformConvTap deform_conv_tap(const DeformConvParams& p, int64_t g, int64_t k) {
  const int64_t taps = p.kernel_h * p.kernel_w;
  const int64_t c = g * (p.in_channels / p.groups) + k / taps, tap = k % taps;
  DeformConvTap t;
  t.x_plane = c * p.in_h * p.in_w;
  t.channel = c / (p.in_channels / p.offset_groups) * taps + tap;
  t.h0 = tap / p.kernel_w * p.dilation_h;
  t.w0 = tap % p.kernel_w * p.dilation_w;
  return t;
}

// Tap t of output pixel (n, oh, ow): x sampled at its offset position, times its mask. Load(i)
// reads element i of x, the offsets or the mask (its first argument, 0, 1 or 2) as float.
template <typename Load>
JP_HD_INLINE float deform_conv_sample(const DeformConvParams& p, Load load, int64_t n, int64_t oh,
                                      int64_t ow, const DeformConvTap& t) {
  const int64_t plane = p.out_h * p.out_w, at = oh * p.out_w + ow;
  const int64_t channel = n * p.offset_groups * p.kernel_h * p.kernel_w + t.channel;
  const int64_t off = channel * 2 * plane + at;
  const float h = float(oh * p.stride_h - p.pad_top + t.h0) + load(1, off);
  const float w = float(ow * p.stride_w - p.pad_left + t.w0) + load(1, off + plane);
  const int64_t x0 = n * p.in_channels * p.in_h * p.in_w + t.x_plane;
  const float v = deform_conv_bilinear([&](int64_t i) { return load(0, x0 + i); }, p.in_h,
                                       p.in_w, h, w);
  return p.has_mask ? v * load(2, channel * plane + at) : v;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// Float32 only (Float16 steps are the CUDA backend's).
void deform_conv(const DeformConvParams& p, const float* x, const float* w, const float* offset,
                 const float* bias, const float* mask, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/deform_conv.cu (columns: kernels/cuda/variants.h): 64x64 tiles
// of one image and group's GEMM (output pixels by output channels), K 16 at a time, the A
// elements sampled as they are loaded (kernels/cuda/fp32_tile.cuh); FP32 FMAs.
#define JP_CUDA_VARIANTS_deform_conv(X, F) \
  X(F, jp_deform_conv_f32, kF32, 256)      \
  X(F, jp_deform_conv_f16, kF16, 256)
