// InstanceNorm on the GPU (statistics over each (batch, channel)'s spatial extent), FP16 or FP32
// storage, every tensor of the step in that dtype, FP32 statistics (norm_rows.cuh). One block of
// 256 threads per (batch, channel), rows grid-stride. Twin: kernels/cpu/instance_norm.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/norm_rows.cuh"
#include "kernels/instance_norm.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void instance_norm(const StepPointers& ptrs, const InstanceNormParams& p) {
  __shared__ float shared[kNormThreads / 32];
  if (!norm_block_ok() || p.spatial < 1 || p.channels < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* scale = static_cast<const T*>(ptrs.in[1]);
  const T* bias = static_cast<const T*>(ptrs.in[2]);
  T* y = static_cast<T*>(ptrs.out[0]);
  for (int64_t row = blockIdx.x; row < p.batch * p.channels; row += gridDim.x) {
    const int64_t c = row % p.channels;
    const float2 ab = make_float2(load_float(scale, c), load_float(bias, c));
    normalize_row(x + row * p.spatial, y + row * p.spatial, p.spatial, p.epsilon, p.act, shared,
                  [ab](int64_t) { return ab; });
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_instance_norm, InstanceNormParams,
                          jetplan::kernels::cuda::instance_norm)
