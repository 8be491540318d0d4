// LRN across channels on the GPU: one thread per output element sums the squares of its
// window's channels in increasing order (FP32; the twin sums in double), then x / (bias +
// alpha / size * sum)^beta. Adjacent threads take adjacent spatial elements of one channel, so
// every read is coalesced. FP16 or FP32 storage. Twin: kernels/cpu/lrn.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/lrn.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void lrn(const StepPointers& ptrs, const LrnParams& p) {
  if (p.size < 1 || p.channels < 1 || p.spatial < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t before = (p.size - 1) / 2, after = p.size - 1 - before;
  const float alpha_over_size = p.alpha / static_cast<float>(p.size);
  const int64_t count = p.batch * p.channels * p.spatial;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t s = i % p.spatial, c = (i / p.spatial) % p.channels;
    const int64_t plane = (i / (p.spatial * p.channels)) * p.channels;  // n * channels
    const int64_t first = c - before < 0 ? 0 : c - before;
    const int64_t last = c + after >= p.channels ? p.channels - 1 : c + after;
    float sq = 0.f;
    for (int64_t k = first; k <= last; ++k) {
      const float v = load_float(x, (plane + k) * p.spatial + s);
      sq += v * v;
    }
    store_float(y, i, load_float(x, i) / powf(p.bias + alpha_over_size * sq, p.beta));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_lrn, LrnParams, jetplan::kernels::cuda::lrn)
