// CumSum and CumProd on the GPU: one thread per lane (outer, inner), adding (multiplying) along
// the axis in order, as the CPU twin (kernels/cpu/cum_sum.cc) does, through the same
// cum_sum_combine: the same operations in the same order, so float32, float64 and the integers
// agree with it bit for bit and float16 (accumulated in float32, each output rounded once) up to
// the twin's own rounding. Exporters use it on position indices and masks, whose axes are
// short next to the lane count, so a scan within a lane would not pay for itself.
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cum_sum.h"

namespace jetplan::kernels::cuda {
namespace {

// T the elements, Acc the sum or product (integers as unsigned: a defined two's-complement wrap).
template <typename T, typename Acc>
__device__ Acc load_acc(const T* x, int64_t i) {
  return static_cast<Acc>(x[i]);
}
template <>
__device__ float load_acc<__half, float>(const __half* x, int64_t i) {
  return __half2float(x[i]);
}
template <typename T, typename Acc>
__device__ void store_acc(T* y, int64_t i, Acc v) {
  y[i] = static_cast<T>(v);
}
template <>
__device__ void store_acc<__half, float>(__half* y, int64_t i, float v) {
  y[i] = __float2half_rn(v);
}

template <typename T, typename Acc>
__device__ void cum_sum_kernel(const StepPointers& ptrs, const CumSumParams& p) {
  const auto* x = static_cast<const T*>(ptrs.in[0]);
  auto* y = static_cast<T*>(ptrs.out[0]);
  const int64_t lanes = p.outer * p.inner;
  for (int64_t lane = global_thread(); lane < lanes; lane += global_threads()) {
    const CumSumLane l = cum_sum_lane(p, lane);
    Acc acc = cum_sum_identity<Acc>(p);
    for (int64_t j = 0; j < p.length; ++j) {
      const int64_t at = l.base + j * l.step;
      const Acc v = load_acc<T, Acc>(x, at);
      if (!p.exclusive) acc = cum_sum_combine(p, acc, v);
      store_acc<T, Acc>(y, at, acc);
      if (p.exclusive) acc = cum_sum_combine(p, acc, v);
    }
  }
}

__device__ void cum_sum_f32(const StepPointers& ptrs, const CumSumParams& p) {
  cum_sum_kernel<float, float>(ptrs, p);
}
__device__ void cum_sum_f16(const StepPointers& ptrs, const CumSumParams& p) {
  cum_sum_kernel<__half, float>(ptrs, p);
}
__device__ void cum_sum_i32(const StepPointers& ptrs, const CumSumParams& p) {
  cum_sum_kernel<int32_t, uint32_t>(ptrs, p);
}
__device__ void cum_sum_i64(const StepPointers& ptrs, const CumSumParams& p) {
  cum_sum_kernel<int64_t, uint64_t>(ptrs, p);
}
__device__ void cum_sum_f64(const StepPointers& ptrs, const CumSumParams& p) {
  cum_sum_kernel<double, double>(ptrs, p);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_cum_sum_f32, CumSumParams, jetplan::kernels::cuda::cum_sum_f32)
JP_STEP_KERNEL(jp_cum_sum_f16, CumSumParams, jetplan::kernels::cuda::cum_sum_f16)
JP_STEP_KERNEL(jp_cum_sum_i32, CumSumParams, jetplan::kernels::cuda::cum_sum_i32)
JP_STEP_KERNEL(jp_cum_sum_i64, CumSumParams, jetplan::kernels::cuda::cum_sum_i64)
JP_STEP_KERNEL(jp_cum_sum_f64, CumSumParams, jetplan::kernels::cuda::cum_sum_f64)
