// The grid-stride loops of the elementwise kernels: one input (Activation, Unary), element i from
// element i; two inputs with numpy broadcasting by strides (Binary, Elementwise), element i from a
// and b at their kernels/dense_index.h operand offsets.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

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

// Eight outputs stored at once (16 bytes of halves, 8 of Int8): q must be aligned to that.
__device__ __forceinline__ void store8(__half* q, const float (&v)[8]) {
  __align__(16) __half h[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) h[e] = __float2half_rn(v[e]);
  *reinterpret_cast<uint4*>(q) = *reinterpret_cast<const uint4*>(h);
}
__device__ __forceinline__ void store8(int8_t* q, const int8_t (&v)[8]) {
  *reinterpret_cast<uint2*>(q) = *reinterpret_cast<const uint2*>(v);
}

// One operand's 8 halves of a group: 16 bytes where it runs along the last dim (stride 1), one
// element repeated where it is broadcast along it (stride 0).
__device__ __forceinline__ void load8(const __half* q, bool along, float (&v)[8]) {
  if (!along) {
    const float x = __half2float(*q);
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = x;
    return;
  }
  const uint4 r = *reinterpret_cast<const uint4*>(q);
  const __half2* h = reinterpret_cast<const __half2*>(&r);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float2 f = __half22float2(h[e]);
    v[2 * e] = f.x, v[2 * e + 1] = f.y;
  }
}

// broadcast2's 8-wide form for half operands (Binary's _x8 variants, which the selection gives
// the large steps of that form: binary_x8_fits, kernels/binary.h): the last dim a multiple of 8
// and each operand along it contiguous or broadcast (NHWC residual Adds, squeeze-excitation Muls
// of [N, 1, 1, C]): groups of 8 outputs a thread, the operand offsets computed once a group in
// 32-bit, 16-byte loads and a wide store. The same f on the same floats, so the same values as
// the element-wise form. False (nothing done) where the step is not of that form or a pointer
// is not aligned for it.
template <typename Out, typename Params, typename F>
__device__ __forceinline__ bool broadcast2_half8(const StepPointers& ptrs, const Params& p, F f) {
  const int r = p.rank - 1;
  if (!binary_x8_fits(p)) return false;
  const __half* a = static_cast<const __half*>(ptrs.in[0]);
  const __half* b = static_cast<const __half*>(ptrs.in[1]);
  Out* y = static_cast<Out*>(ptrs.out[0]);
  const bool a_along = p.a_strides[r] == 1, b_along = p.b_strides[r] == 1;
  // Every group starts at a multiple of 8 elements of y and of a contiguous operand (its outer
  // strides are multiples of its last dim, the output's), so base alignment is enough.
  const auto misaligned = [](const void* q, uintptr_t n) { return reinterpret_cast<uintptr_t>(q) % n != 0; };
  if ((a_along && misaligned(a, 16)) || (b_along && misaligned(b, 16)) ||
      misaligned(y, 8 * sizeof(Out)))
    return false;
  const int64_t count = dense_count(p.rank, p.out_dims);
  int dims[kMaxRank];
  for (int d = 0; d < p.rank; ++d) dims[d] = int(p.out_dims[d]);
  const int groups = int(count / 8);
  for (int64_t g = global_thread(); g < groups; g += global_threads()) {
    OperandOffsets off;
    int rest = int(g) * 8;
    for (int d = r; d >= 0; --d) {
      const int coord = rest % dims[d];
      rest /= dims[d];
      off.a += coord * p.a_strides[d];
      off.b += coord * p.b_strides[d];
    }
    float va[8], vb[8];
    load8(a + off.a, a_along, va);
    load8(b + off.b, b_along, vb);
    if constexpr (std::is_same_v<Out, int8_t>) {
      __align__(8) int8_t q[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) q[e] = f(va[e], vb[e]);
      store8(y + g * 8, q);
    } else {
      float v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = f(va[e], vb[e]);
      store8(y + g * 8, v);
    }
  }
  return true;
}

// y[i] = f(a[i . a_strides], b[i . b_strides]) over the dense out_dims; a result stored into a
// half output rounds to nearest even. X8: broadcast2_half8 first, where it applies.
template <typename In, typename Out, typename Params, typename F, bool X8 = false>
__device__ void broadcast2(const StepPointers& ptrs, const Params& p, F f) {
  if constexpr (X8) {
    static_assert(std::is_same_v<In, __half>, "the 8-wide form reads halves");
    if (broadcast2_half8<Out>(ptrs, p, f)) return;
  }
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
