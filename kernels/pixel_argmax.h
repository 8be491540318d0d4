// A segmentation network's logits to a class per pixel: the index of the largest of `classes`
// logits, ties to the lowest class, a NaN logit never chosen over a number (all NaN: class 0).
// CPU twin kernels/cpu/pixel_argmax.cc, CUDA kernel kernels/cuda/pixel_argmax.cu, both through
// pixel_argmax_at below: comparisons only, so the classes agree exactly.
//
// Not a plan op family (not in kernels/op_families.def, no plan holds it): applications call it
// through the runtime's public API (jp_pixel_classes, runtime/include/jetplan/jetplan.h) on a
// plan's output; the runtime checks the sizes, the kernels trust them.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace jetplan::kernels {

struct PixelArgmaxParams {
  int32_t classes = 0;
  int32_t height = 0, width = 0;
  bool channels_last = false;  // logits [H, W, classes] instead of [classes, H, W]; batch 1
};

JP_HD_INLINE int64_t pixel_argmax_pixels(const PixelArgmaxParams& p) {
  return static_cast<int64_t>(p.height) * p.width;
}

JP_HD_INLINE int32_t pixel_argmax_at(const PixelArgmaxParams& p, const float* logits,
                                     int64_t pixel) {
  const int64_t step = p.channels_last ? 1 : pixel_argmax_pixels(p);
  const float* v = logits + (p.channels_last ? pixel * p.classes : pixel);
  int32_t best = 0;
  float top = v[0];
  for (int32_t c = 1; c < p.classes; ++c) {
    const float x = v[c * step];
    if (x > top || (top != top && x == x)) {
      top = x;
      best = c;
    }
  }
  return best;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// logits: classes * height * width floats; out: height * width classes. Borrowed for the call.
void pixel_argmax(const PixelArgmaxParams& p, const float* logits, int32_t* out);

}  // namespace jetplan::kernels::cpu

// The CUDA kernel: extern "C" jp_pixel_argmax(PixelArgmaxArgs, PixelArgmaxParams), a thread per
// pixel over a grid-stride loop, any grid.
namespace jetplan::kernels::cuda {
struct PixelArgmaxArgs {
  const float* logits;  // device memory
  int32_t* out;         // device memory
};
constexpr const char* kPixelArgmaxKernel = "jp_pixel_argmax";
constexpr uint32_t kPixelArgmaxBlock = 256;
}  // namespace jetplan::kernels::cuda
