// Unary math on the GPU (ONNX Abs, Exp, Erf, Sign, IsNaN, Not, ...): every UnaryOp of the CPU
// twin kernels/cpu/unary.cc. Float32 and Float16 storage (FP32 arithmetic with the accurate
// libdevice functions, not the fast intrinsics), int32/int64 Abs/Neg/Sign with two's complement
// wrap, and bool Not. Predicates (IsNaN, IsInf, ...) write bool bytes.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/elementwise_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void unary_math(const StepPointers& ptrs, const UnaryParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const UnaryOp op = p.op;
  for (int64_t i = global_thread(); i < p.count; i += global_threads())
    store_float(y, i, unary_float(op, load_float(x, i)));
}

template <typename T>
__device__ void unary_pred(const StepPointers& ptrs, const UnaryParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  unsigned char* y = static_cast<unsigned char*>(ptrs.out[0]);
  const UnaryOp op = p.op;
  for (int64_t i = global_thread(); i < p.count; i += global_threads())
    y[i] = unary_predicate(op, load_float(x, i)) ? 1 : 0;
}

template <typename T, typename U>
__device__ void unary_int(const StepPointers& ptrs, const UnaryParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const UnaryOp op = p.op;
  for (int64_t i = global_thread(); i < p.count; i += global_threads()) {
    const T v = x[i];
    const T negated = static_cast<T>(static_cast<U>(U{0} - static_cast<U>(v)));
    T r = v;
    if (op == UnaryOp::kAbs) r = v < 0 ? negated : v;
    else if (op == UnaryOp::kNeg) r = negated;
    else if (op == UnaryOp::kSign) r = static_cast<T>(v > 0 ? 1 : (v < 0 ? -1 : 0));
    y[i] = r;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::UnaryParams;
using jetplan::kernels::cuda::StepPointers;
namespace k = jetplan::kernels::cuda;

extern "C" __global__ void jp_unary_f32(StepPointers ptrs, const UnaryParams p) {
  k::unary_math<float>(ptrs, p);
}
extern "C" __global__ void jp_unary_f16(StepPointers ptrs, const UnaryParams p) {
  k::unary_math<__half>(ptrs, p);
}
extern "C" __global__ void jp_unary_pred_f32(StepPointers ptrs, const UnaryParams p) {
  k::unary_pred<float>(ptrs, p);
}
extern "C" __global__ void jp_unary_pred_f16(StepPointers ptrs, const UnaryParams p) {
  k::unary_pred<__half>(ptrs, p);
}
extern "C" __global__ void jp_unary_i32(StepPointers ptrs, const UnaryParams p) {
  k::unary_int<int32_t, uint32_t>(ptrs, p);
}
extern "C" __global__ void jp_unary_i64(StepPointers ptrs, const UnaryParams p) {
  k::unary_int<int64_t, uint64_t>(ptrs, p);
}
extern "C" __global__ void jp_unary_not(StepPointers ptrs, const UnaryParams p) {
  const unsigned char* x = static_cast<const unsigned char*>(ptrs.in[0]);
  unsigned char* y = static_cast<unsigned char*>(ptrs.out[0]);
  for (int64_t i = k::global_thread(); i < p.count; i += k::global_threads()) y[i] = x[i] == 0;
}
