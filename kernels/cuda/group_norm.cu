// GroupNorm on the GPU (statistics over each (batch, group)'s channels and spatial extent, which
// lie contiguous), FP16 or FP32 storage, every tensor of the step in that dtype, FP32 statistics
// (norm_rows.cuh). One block of 256 threads per (batch, group), rows grid-stride; scale and bias
// per channel, or per group (affine_per_group, opset 18). Twin: kernels/cpu/group_norm.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/norm_rows.cuh"
#include "kernels/group_norm.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void group_norm(const StepPointers& ptrs, const GroupNormParams& p) {
  __shared__ float shared[kNormThreads / 32];
  if (!norm_block_ok() || p.spatial < 1 || p.groups < 1 || p.channels < p.groups ||
      p.channels % p.groups != 0)
    return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* scale = static_cast<const T*>(ptrs.in[1]);
  const T* bias = static_cast<const T*>(ptrs.in[2]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t per_group = p.channels / p.groups, count = per_group * p.spatial;
  for (int64_t row = blockIdx.x; row < p.batch * p.groups; row += gridDim.x) {
    const int64_t g = row % p.groups;
    const auto affine = [&](int64_t i) {
      const int64_t a = p.affine_per_group ? g : g * per_group + i / p.spatial;
      return make_float2(load_float(scale, a), load_float(bias, a));
    };
    normalize_row(x + row * count, y + row * count, count, p.epsilon, p.act, shared, affine);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_group_norm, GroupNormParams, jetplan::kernels::cuda::group_norm)
