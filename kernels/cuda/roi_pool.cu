// RoiAlign and MaxRoiPool on the GPU: a thread per output element (box, channel, bin), adjacent
// threads on adjacent bins of one channel, so Y's writes coalesce; each computes its box and
// samples (roi_pool_math, the CPU twin's own math: the same taps, weights and float32 sums) and
// reads X where they point. X in Float16 or Float32 (summed in float32, Y rounded once); rois
// Float32 (a coordinate of 500 in Float16 would move by a quarter pixel), batch indices Int64.
// Twin: kernels/cpu/roi_pool.cc.
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/roi_pool.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void roi_pool_kernel(const StepPointers& ptrs, const RoiPoolParams& p) {
  // What prepare checked, again: the plan is untrusted. An out-of-range batch index gives zeros
  // (roi_pool_math), so no box reads outside X.
  if (p.height < 1 || p.width < 1 || p.out_h < 1 || p.out_w < 1 || p.channels < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const float* rois = static_cast<const float*>(ptrs.in[1]);
  const int64_t* batch_indices =
      p.mode == RoiPoolMode::kMax ? nullptr : static_cast<const int64_t*>(ptrs.in[2]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t items = roi_pool_outputs(p);
  for (int64_t i = global_thread(); i < items; i += global_threads()) {
    const float v = roi_pool_math::output(p, rois, batch_indices, i,
                                          [x](int64_t offset) { return load_float<T>(x, offset); });
    store_float<T>(y, i, v);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_roi_pool, RoiPoolParams, jetplan::kernels::cuda::roi_pool_kernel)
