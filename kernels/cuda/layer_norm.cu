// LayerNorm (statistics over the last `inner` elements of each row) on the GPU, FP16 or FP32
// storage, every tensor of the step in that dtype, FP32 arithmetic. Statistics are two-pass (mean,
// then the mean of squared deviations) with block reductions in a fixed order; RMS steps skip the
// mean (normalize_row's rms). Twin:
// kernels/cpu/layer_norm.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/norm_rows.cuh"
#include "kernels/layer_norm.h"

namespace jetplan::kernels::cuda {
namespace {

// One block of 256 threads per row, rows grid-stride. Within a row each thread takes elements
// tid, tid + 256, ...; the row is read three times (mean, deviations, output), from L1/L2 after
// the first for rows of ViT size.
template <typename T>
__device__ void layer_norm(const StepPointers& ptrs, const LayerNormParams& p) {
  __shared__ float shared[kNormThreads / 32];
  if (!norm_block_ok() || p.inner < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const T* scale = static_cast<const T*>(ptrs.in[1]);
  const T* bias = p.has_bias ? static_cast<const T*>(ptrs.in[2]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  for (int64_t row = blockIdx.x; row < p.outer; row += gridDim.x) {
    normalize_row(x + row * p.inner, y + row * p.inner, p.inner, p.epsilon, p.act, shared,
                  [&](int64_t i) {
                    return make_float2(load_float(scale, i),
                                       bias != nullptr ? load_float(bias, i) : 0.f);
                  },
                  p.rms);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_layer_norm, LayerNormParams, jetplan::kernels::cuda::layer_norm)
