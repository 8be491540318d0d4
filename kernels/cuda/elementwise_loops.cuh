// The grid-stride loops of the elementwise kernels: one input (Activation, Unary), element i from
// element i; two inputs with numpy broadcasting by strides (Binary, Elementwise), element i from a
// and b at their kernels/dense_index.h operand offsets.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {

// What an element is computed as: itself, or a half as the float it exactly is.
template <typename T> struct Loaded { using type = T; };
template <> struct Loaded<__half> { using type = float; };
template <typename T>
__device__ __forceinline__ typename Loaded<T>::type load(const T* p, int64_t i) { return p[i]; }
template <>
__device__ __forceinline__ float load<__half>(const __half* p, int64_t i) {
  return __half2float(p[i]);
}

// y[i] = f(x[i]) over count elements of input 0 and output 0; a result stored into a half output
// rounds to nearest even.
template <typename In, typename Out, typename F>
__device__ void map_elements(const StepPointers& ptrs, int64_t count, F f) {
  const In* x = static_cast<const In*>(ptrs.in[0]);
  Out* y = static_cast<Out*>(ptrs.out[0]);
  for (int64_t i = global_thread(); i < count; i += global_threads()) y[i] = f(load(x, i));
}

// y[i] = f(a[i . a_strides], b[i . b_strides]) over the dense out_dims; a result stored into a
// half output rounds to nearest even.
template <typename In, typename Out, typename Params, typename F>
__device__ void broadcast2(const StepPointers& ptrs, const Params& p, F f) {
  const In* a = static_cast<const In*>(ptrs.in[0]);
  const In* b = static_cast<const In*>(ptrs.in[1]);
  Out* y = static_cast<Out*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const OperandOffsets off = operand_offsets(i, p.rank, p.out_dims, p.a_strides, p.b_strides);
    y[i] = f(load(a, off.a), load(b, off.b));
  }
}

}  // namespace jetplan::kernels::cuda
