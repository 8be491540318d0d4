// Unary math on the GPU (ONNX Abs, Exp, Erf, Sign, IsNaN, Not, ...): every UnaryOp of the CPU twin
// kernels/cpu/unary.cc, with the formulas of kernels/scalar_ops.h. Float32 and Float16 storage
// (FP32 arithmetic with the accurate libdevice functions, not the fast intrinsics), int32/int64
// Abs/Neg/Sign with two's complement wrap, and bool Not. Predicates (IsNaN, IsInf, ...) write bool
// bytes.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/elementwise_loops.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/unary.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void unary_math(const StepPointers& ptrs, const UnaryParams& p) {
  const UnaryOp op = p.op;
  map_elements<T, T>(ptrs, p.count, [op](float v) { return unary_value(op, v); });
}

template <typename T>
__device__ void unary_pred(const StepPointers& ptrs, const UnaryParams& p) {
  const UnaryOp op = p.op;
  map_elements<T, unsigned char>(ptrs, p.count, [op](float v) -> unsigned char {
    return unary_predicate_value(op, v) ? 1 : 0;
  });
}

template <typename T>
__device__ void unary_int(const StepPointers& ptrs, const UnaryParams& p) {
  const UnaryOp op = p.op;
  map_elements<T, T>(ptrs, p.count, [op](T v) { return unary_integer_value<T>(op, v); });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::UnaryParams;
using jetplan::kernels::cuda::StepPointers;
namespace k = jetplan::kernels::cuda;

JP_HALF_AND_FLOAT_KERNELS(jp_unary, UnaryParams, jetplan::kernels::cuda::unary_math)
JP_HALF_AND_FLOAT_KERNELS(jp_unary_pred, UnaryParams, jetplan::kernels::cuda::unary_pred)
JP_STEP_KERNEL(jp_unary_i32, UnaryParams, jetplan::kernels::cuda::unary_int<int32_t>)
JP_STEP_KERNEL(jp_unary_i64, UnaryParams, jetplan::kernels::cuda::unary_int<int64_t>)
extern "C" __global__ void jp_unary_not(StepPointers ptrs, const UnaryParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  k::map_elements<unsigned char, unsigned char>(
      ptrs, p.count, [](unsigned char v) -> unsigned char { return v == 0; });
}
