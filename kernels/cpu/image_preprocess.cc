// CPU twin of the camera-frame preprocessing (kernels/image_preprocess.h): the shared per-pixel
// formula over every output pixel, stored as FP32 or rounded to FP16 (nearest even).
#include "kernels/image_preprocess.h"

#include "kernels/cpu/half.h"

namespace jetplan::kernels::cpu {

void image_preprocess(const ImagePreprocessParams& p, const uint8_t* src, void* out) {
  auto* f32 = static_cast<float*>(out);
  auto* f16 = static_cast<uint16_t*>(out);
  for (int32_t oy = 0; oy < p.y.out; ++oy) {
    for (int32_t ox = 0; ox < p.x.out; ++ox) {
      float v[3];
      image_preprocess_pixel(p, src, ox, oy, v);
      for (int c = 0; c < 3; ++c) {
        const int64_t i = image_output_index(p, ox, oy, c);
        if (p.half) f16[i] = half_from_float(v[c]);
        else f32[i] = v[c];
      }
    }
  }
}

}  // namespace jetplan::kernels::cpu
