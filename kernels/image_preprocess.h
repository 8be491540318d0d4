// Camera frame to network input in one pass: decode (RGB8, BGR8 or YUYV 4:2:2), bilinear resize
// (stretched, letterboxed or centre-cropped), per-channel mean/std normalization and channel
// order, written as FP16 or FP32, NHWC or NCHW. CPU twin kernels/cpu/image_preprocess.cc, CUDA
// kernel kernels/cuda/image_preprocess.cu; both call image_preprocess_pixel below, so they do the
// same arithmetic in the same order. Every multiply-add is an explicit fmaf (one rounding, on
// both sides), so no compiler can contract some of them on one side only: the bits agree.
//
// Not a plan op family (it is not in kernels/op_families.def and no plan holds it): applications
// call it through the runtime's public API (jp_preprocess_*, runtime/include/jetplan/jetplan.h)
// on the frames they hand to a plan. The runtime resolves jp_preprocess_desc into these params
// (image_preprocess_params, runtime/src/api/preprocess.cc) and checks the sizes; the kernels trust
// them.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"

namespace jetplan::kernels {

enum class PixelFormat : uint8_t {
  kRgb8 = 0,  // 3 bytes a pixel, R G B
  kBgr8 = 1,  // 3 bytes a pixel, B G R (OpenCV's order)
  kYuyv = 2,  // 4 bytes a pair of pixels, Y0 U Y1 V (V4L2_PIX_FMT_YUYV); width even
};

// One output axis (x or y) of the resize. Output position o (0 <= o < out) samples the source at
//   s = (o + 0.5) * scale + offset - 0.5          (half-pixel centres, as cv2.resize INTER_LINEAR)
// when content_begin <= o < content_end, and is the pad value elsewhere (letterbox bars).
// Bilinear between floor(s) and floor(s) + 1, both clamped to [0, in - 1] (edge replicate).
struct ResizeAxis {
  int32_t in = 0;   // source pixels along the axis
  int32_t out = 0;  // output pixels along the axis
  int32_t content_begin = 0;
  int32_t content_end = 0;
  float scale = 1.f;   // source pixels per output pixel
  float offset = 0.f;  // source pixels skipped before the first sampled one (crop) or, negative,
                       // the letterbox bar in source pixels
};

struct ImagePreprocessParams {
  PixelFormat format = PixelFormat::kRgb8;
  int64_t row_bytes = 0;  // source stride, >= width * 3 (RGB/BGR) or width * 2 (YUYV)
  ResizeAxis x, y;
  // Output channel c holds RGB channel channel_source[c] (0 R, 1 G, 2 B): {0, 1, 2} for an RGB
  // network, {2, 1, 0} for a BGR one (Caffe and OpenCV-trained models).
  int32_t channel_source[3] = {0, 1, 2};
  // out = pixel * scale[c] + bias[c], pixel in [0, 255], c the OUTPUT channel; the runtime sets
  // scale = 1 / (255 std), bias = -mean / std with mean and std in [0, 1] units (torchvision's).
  float scale[3] = {1.f, 1.f, 1.f};
  float bias[3] = {0.f, 0.f, 0.f};
  float pad[3] = {0.f, 0.f, 0.f};  // letterbox bars, already normalized, per output channel
  bool half = false;               // FP16 (binary16 bits) instead of FP32
  bool channels_first = false;     // NCHW instead of NHWC; batch 1 either way
};

// The RGB value of source pixel (px, py) as floats in [0, 255]. YUYV: ITU-R BT.601 limited range
// (16..235), what UVC webcams send, clamped to [0, 255]; not rounded to integers.
JP_HD_INLINE void image_source_rgb(const ImagePreprocessParams& p, const uint8_t* src, int32_t px,
                                   int32_t py, float rgb[3]) {
  const uint8_t* row = src + static_cast<int64_t>(py) * p.row_bytes;
  if (p.format == PixelFormat::kYuyv) {
    const uint8_t* pair = row + (px / 2) * 4;
    const float y = 1.164383f * (static_cast<float>(pair[(px % 2) * 2]) - 16.f);
    const float u = static_cast<float>(pair[1]) - 128.f;
    const float v = static_cast<float>(pair[3]) - 128.f;
    const float r = fmaf(1.596027f, v, y);
    const float g = fmaf(-0.812968f, v, fmaf(-0.391762f, u, y));
    const float b = fmaf(2.017232f, u, y);
    rgb[0] = r < 0.f ? 0.f : (r > 255.f ? 255.f : r);
    rgb[1] = g < 0.f ? 0.f : (g > 255.f ? 255.f : g);
    rgb[2] = b < 0.f ? 0.f : (b > 255.f ? 255.f : b);
    return;
  }
  const uint8_t* px3 = row + static_cast<int64_t>(px) * 3;
  const bool bgr = p.format == PixelFormat::kBgr8;
  rgb[0] = static_cast<float>(px3[bgr ? 2 : 0]);
  rgb[1] = static_cast<float>(px3[1]);
  rgb[2] = static_cast<float>(px3[bgr ? 0 : 2]);
}

// The two taps and the weight of the second along one axis for output position o.
JP_HD_INLINE void image_axis_taps(const ResizeAxis& a, int32_t o, int32_t* i0, int32_t* i1,
                                  float* w1) {
  float s = fmaf(static_cast<float>(o) + 0.5f, a.scale, a.offset) - 0.5f;
  if (s < 0.f) s = 0.f;  // edge replicate: before the first centre is the first pixel
  int32_t lo = static_cast<int32_t>(s);  // s >= 0: truncation is floor
  if (lo > a.in - 1) lo = a.in - 1;
  *i0 = lo;
  *i1 = lo + 1 < a.in ? lo + 1 : a.in - 1;
  *w1 = s - static_cast<float>(lo);  // past the last centre both taps are the last pixel
}

// The three normalized output values of output pixel (ox, oy), in output channel order.
JP_HD_INLINE void image_preprocess_pixel(const ImagePreprocessParams& p, const uint8_t* src,
                                         int32_t ox, int32_t oy, float out[3]) {
  if (ox < p.x.content_begin || ox >= p.x.content_end || oy < p.y.content_begin ||
      oy >= p.y.content_end) {
    for (int c = 0; c < 3; ++c) out[c] = p.pad[c];
    return;
  }
  int32_t x0, x1, y0, y1;
  float fx, fy;
  image_axis_taps(p.x, ox, &x0, &x1, &fx);
  image_axis_taps(p.y, oy, &y0, &y1, &fy);
  float a[3], b[3], c[3], d[3];
  image_source_rgb(p, src, x0, y0, a);
  image_source_rgb(p, src, x1, y0, b);
  image_source_rgb(p, src, x0, y1, c);
  image_source_rgb(p, src, x1, y1, d);
  float rgb[3];
  for (int k = 0; k < 3; ++k) {
    const float top = fmaf(b[k] - a[k], fx, a[k]);
    const float bottom = fmaf(d[k] - c[k], fx, c[k]);
    rgb[k] = fmaf(bottom - top, fy, top);
  }
  for (int k = 0; k < 3; ++k) {
    const int32_t from = p.channel_source[k];  // a select, not an index: rgb stays in registers
    const float v = from == 0 ? rgb[0] : (from == 1 ? rgb[1] : rgb[2]);
    out[k] = fmaf(v, p.scale[k], p.bias[k]);
  }
}

// Element offset of output channel c of pixel (ox, oy).
JP_HD_INLINE int64_t image_output_index(const ImagePreprocessParams& p, int32_t ox, int32_t oy,
                                        int c) {
  const int64_t pixel = static_cast<int64_t>(oy) * p.x.out + ox;
  return p.channels_first ? c * static_cast<int64_t>(p.y.out) * p.x.out + pixel : pixel * 3 + c;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// src: the frame, p.y.in rows of p.row_bytes. out: 3 * p.x.out * p.y.out elements of FP32, or of
// FP16 bits (uint16_t) when p.half. Both borrowed for the call; out must not alias src.
void image_preprocess(const ImagePreprocessParams& p, const uint8_t* src, void* out);

}  // namespace jetplan::kernels::cpu

// The CUDA kernel: extern "C" jp_image_preprocess(ImagePreprocessArgs, ImagePreprocessParams),
// one thread per output pixel over a grid-stride loop, any grid.
namespace jetplan::kernels::cuda {
struct ImagePreprocessArgs {
  const uint8_t* src;  // device (or mapped pinned) memory
  void* out;           // device memory
};
constexpr const char* kImagePreprocessKernel = "jp_image_preprocess";
constexpr uint32_t kImagePreprocessBlock = 256;
}  // namespace jetplan::kernels::cuda
