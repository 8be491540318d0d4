// Elementwise on the GPU (typed arithmetic, comparisons, logic with numpy broadcasting by
// strides), the formulas of kernels/scalar_ops.h. Twin: kernels/cpu/elementwise.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/elementwise_loops.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/elementwise.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void compare_kernel(const StepPointers& ptrs, const ElementwiseParams& p) {
  using L = typename Loaded<T>::type;
  const ElementwiseOp op = p.op;
  broadcast2<T, unsigned char>(ptrs, p, [op](L u, L v) -> unsigned char {
    return elementwise_compare_value<L>(op, u, v) ? 1 : 0;
  });
}

template <typename T>
__device__ void integer_kernel(const StepPointers& ptrs, const ElementwiseParams& p) {
  const ElementwiseOp op = p.op;
  broadcast2<T, T>(ptrs, p, [op](T u, T v) { return elementwise_integer_value<T>(op, u, v); });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ElementwiseParams;
using jetplan::kernels::cuda::StepPointers;
namespace k = jetplan::kernels::cuda;

#define JP_CMP(name, T)                                                               \
  extern "C" __global__ void jp_elementwise_cmp_##name(StepPointers ptrs,               \
                                                       const ElementwiseParams p) {     \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    k::compare_kernel<T>(ptrs, p);                                                      \
  }
JP_CMP(f32, float)
JP_CMP(f16, __half)
JP_CMP(f64, double)
JP_CMP(i8, int8_t)
JP_CMP(u8, uint8_t)
JP_CMP(i32, int32_t)
JP_CMP(i64, int64_t)
JP_CMP(bool, uint8_t)
JP_CMP(i16, int16_t)
JP_CMP(u16, uint16_t)
JP_CMP(u32, uint32_t)
JP_CMP(u64, uint64_t)
#undef JP_CMP

JP_STEP_KERNEL(jp_elementwise_i32, ElementwiseParams,
               jetplan::kernels::cuda::integer_kernel<int32_t>)
JP_STEP_KERNEL(jp_elementwise_i64, ElementwiseParams,
               jetplan::kernels::cuda::integer_kernel<int64_t>)
JP_STEP_KERNEL(jp_elementwise_i16, ElementwiseParams,
               jetplan::kernels::cuda::integer_kernel<int16_t>)
JP_STEP_KERNEL(jp_elementwise_u16, ElementwiseParams,
               jetplan::kernels::cuda::integer_kernel<uint16_t>)
JP_STEP_KERNEL(jp_elementwise_u32, ElementwiseParams,
               jetplan::kernels::cuda::integer_kernel<uint32_t>)
JP_STEP_KERNEL(jp_elementwise_u64, ElementwiseParams,
               jetplan::kernels::cuda::integer_kernel<uint64_t>)
// Float64 arithmetic (Add, Sub, Mul, Div, FMod, Max, Min, Pow), the twin's formulas.
extern "C" __global__ void jp_elementwise_f64(StepPointers ptrs, const ElementwiseParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  const jetplan::kernels::ElementwiseOp op = p.op;
  k::broadcast2<double, double>(ptrs, p, [op](double u, double v) {
    return jetplan::kernels::elementwise_float64_value(op, u, v);
  });
}
extern "C" __global__ void jp_elementwise_fmod_f32(StepPointers ptrs, const ElementwiseParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  k::broadcast2<float, float>(
      ptrs, p, [](float u, float v) { return jetplan::kernels::fmod_value(u, v); });
}
extern "C" __global__ void jp_elementwise_fmod_f16(StepPointers ptrs, const ElementwiseParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  k::broadcast2<__half, __half>(
      ptrs, p, [](float u, float v) { return jetplan::kernels::fmod_value(u, v); });
}
extern "C" __global__ void jp_elementwise_fmod_f64(StepPointers ptrs, const ElementwiseParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  k::broadcast2<double, double>(
      ptrs, p, [](double u, double v) { return jetplan::kernels::fmod_value(u, v); });
}
