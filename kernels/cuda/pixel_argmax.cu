// The per-pixel class on the GPU (kernels/pixel_argmax.h): a thread per pixel, grid-stride, the
// twin's function (kernels/cpu/pixel_argmax.cc). With channels first, neighbouring threads read
// neighbouring pixels of each class plane: coalesced.
#include "kernels/cuda/device_math.cuh"
#include "kernels/pixel_argmax.h"

using jetplan::kernels::PixelArgmaxParams;
using jetplan::kernels::cuda::PixelArgmaxArgs;

extern "C" __global__ void jp_pixel_argmax(PixelArgmaxArgs args, const PixelArgmaxParams p) {
  namespace k = jetplan::kernels;
  const int64_t pixels = k::pixel_argmax_pixels(p);
  for (int64_t i = k::cuda::global_thread(); i < pixels; i += k::cuda::global_threads())
    args.out[i] = k::pixel_argmax_at(p, args.logits, i);
}
