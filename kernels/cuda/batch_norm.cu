// BatchNorm (inference, per-channel statistics; NCHW or NHWC) on the GPU, FP16 or FP32 storage,
// every tensor of the step in that dtype (scale, bias, mean, var included), FP32 arithmetic.
// Twin: kernels/cpu/batch_norm.cc.
#include <cuda_fp16.h>

#include "kernels/batch_norm.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void batch_norm(const StepPointers& ptrs, const BatchNormParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* scale = static_cast<const T*>(ptrs.in[1]);
  const T* bias = static_cast<const T*>(ptrs.in[2]);
  const T* mean = static_cast<const T*>(ptrs.in[3]);
  const T* var = static_cast<const T*>(ptrs.in[4]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t count = p.batch * p.channels * p.spatial;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t c = p.channels_last ? i % p.channels : (i / p.spatial) % p.channels;
    const float inv_std = rsqrtf(load_float(var, c) + p.epsilon);
    const float v = load_float(scale, c) * (load_float(x, i) - load_float(mean, c)) * inv_std;
    store_float(y, i, v + load_float(bias, c));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_batch_norm, BatchNormParams, jetplan::kernels::cuda::batch_norm)
