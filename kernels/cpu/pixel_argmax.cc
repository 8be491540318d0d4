// CPU twin of the per-pixel class (kernels/pixel_argmax.h): the shared function over every pixel.
#include "kernels/pixel_argmax.h"

namespace jetplan::kernels::cpu {

void pixel_argmax(const PixelArgmaxParams& p, const float* logits, int32_t* out) {
  const int64_t pixels = pixel_argmax_pixels(p);
  for (int64_t i = 0; i < pixels; ++i) out[i] = pixel_argmax_at(p, logits, i);
}

}  // namespace jetplan::kernels::cpu
