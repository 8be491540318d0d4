// The camera-frame preprocessing on the GPU (kernels/image_preprocess.h): one thread per output
// pixel, grid-stride, the twin's per-pixel formula (kernels/cpu/image_preprocess.cc) and the
// same FP16 rounding (nearest even): equal to the twin bit for bit (the formula's multiply-adds
// are explicit fmaf calls).
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/image_preprocess.h"

using jetplan::kernels::ImagePreprocessParams;
using jetplan::kernels::cuda::ImagePreprocessArgs;

extern "C" __global__ void jp_image_preprocess(ImagePreprocessArgs args,
                                               const ImagePreprocessParams p) {
  namespace k = jetplan::kernels;
  const int64_t pixels = static_cast<int64_t>(p.x.out) * p.y.out;
  for (int64_t i = k::cuda::global_thread(); i < pixels; i += k::cuda::global_threads()) {
    const int32_t oy = static_cast<int32_t>(i / p.x.out);
    const int32_t ox = static_cast<int32_t>(i % p.x.out);
    float v[3];
    k::image_preprocess_pixel(p, args.src, ox, oy, v);
    for (int c = 0; c < 3; ++c) {
      const int64_t o = k::image_output_index(p, ox, oy, c);
      if (p.half) static_cast<__half*>(args.out)[o] = __float2half_rn(v[c]);
      else static_cast<float*>(args.out)[o] = v[c];
    }
  }
}
