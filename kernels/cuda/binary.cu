// The Binary family on the GPU (numpy broadcasting by strides), FP16 and FP32 storage, FP32
// arithmetic with binary_value and the fused activation_value (kernels/scalar_ops.h); an Add of
// Int8 tensors with requantization; a float Binary writing Int8 for INT8 readers. Twin:
// kernels/cpu/binary.cc.
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/binary.h"
#include "kernels/cuda/elementwise_loops.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cuda {
namespace {

// One operand's 8 halves of a group: 16 bytes where it runs along the last dim (stride 1), one
// element repeated where it is broadcast along it (stride 0).
__device__ __forceinline__ void load_operand8(const __half* q, bool along, float (&v)[8]) {
  if (along) {
    load8(q, v);
    return;
  }
  const float x = __half2float(*q);
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = x;
}

// broadcast2's 8-wide form for half operands (the _x8 variants, which the selection gives the
// large steps of that form: binary_x8_fits, kernels/binary.h): the last dim a multiple of 8
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
    load_operand8(a + off.a, a_along, va);
    load_operand8(b + off.b, b_along, vb);
    if constexpr (std::is_same_v<Out, int8_t>) {
      __align__(8) int8_t q[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) q[e] = f(va[e], vb[e]);
      store8(y + g * 8, q);  // aligned (checked above): one 8-byte store
    } else {
      float v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = f(va[e], vb[e]);
      store8(y + g * 8, v);
    }
  }
  return true;
}

// The element-wise form, or with X8 the 8-wide one where the step and its pointers allow. The
// 8-wide forms are kernels of their own (_x8) so that the small steps' element-wise kernels keep
// their code (in one kernel with them they ran about a microsecond slower a launch:
// MobileNetV3-S at batch 1, H200).
template <typename In, typename Out, bool X8, typename F>
__device__ __forceinline__ void binary_loop(const StepPointers& ptrs, const BinaryParams& p, F f) {
  if constexpr (X8) {
    static_assert(std::is_same_v<In, __half>, "the 8-wide form reads halves");
    if (broadcast2_half8<Out>(ptrs, p, f)) return;
  }
  broadcast2<In, Out>(ptrs, p, f);
}

template <typename T, bool X8 = false>
__device__ void binary(const StepPointers& ptrs, const BinaryParams& p) {
  binary_loop<T, T, X8>(ptrs, p, [&p](float a, float b) {
    return activation_value(p.act, binary_value(p.op, a, b));
  });
}
__device__ void binary_x8(const StepPointers& ptrs, const BinaryParams& p) {
  binary<__half, true>(ptrs, p);
}

// An INT8 plan's Add of Int8 tensors (ptrs.in[2]: a's scale, b's, 1 / y's): the twin's
// cpu::binary_add_int8 operations (kernels/int8_epilogue.h), so the same bits.
__device__ void binary_add_i8(const StepPointers& ptrs, const BinaryParams& p) {
  const float* scales = static_cast<const float*>(ptrs.in[2]);
  const float sa = scales[0], sb = scales[1], inv_y = scales[2];
  broadcast2<int8_t, int8_t>(ptrs, p, [&p, sa, sb, inv_y](int8_t a, int8_t b) {
    return int8_quantize(activation_value(p.act, int8_add_real(a, sa, b, sb)), inv_y);
  });
}

// An INT8 plan's float Binary writing Int8 (ptrs.in[2]: 1 / y's scale): the twin's
// cpu::binary_to_int8 operations, so the same bits for the same float operands.
template <typename T, bool X8 = false>
__device__ void binary_q8(const StepPointers& ptrs, const BinaryParams& p) {
  const float inv_y = *static_cast<const float*>(ptrs.in[2]);
  binary_loop<T, int8_t, X8>(ptrs, p, [&p, inv_y](float a, float b) {
    return int8_quantize(activation_value(p.act, binary_value(p.op, a, b)), inv_y);
  });
}
__device__ void binary_q8_x8(const StepPointers& ptrs, const BinaryParams& p) {
  binary_q8<__half, true>(ptrs, p);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_binary, BinaryParams, jetplan::kernels::cuda::binary)
JP_STEP_KERNEL(jp_binary_add_i8, BinaryParams, jetplan::kernels::cuda::binary_add_i8)
JP_HALF_AND_FLOAT_KERNELS(jp_binary_q8, BinaryParams, jetplan::kernels::cuda::binary_q8)
JP_STEP_KERNEL(jp_binary_x8_f16, BinaryParams, jetplan::kernels::cuda::binary_x8)
JP_STEP_KERNEL(jp_binary_q8_x8_f16, BinaryParams, jetplan::kernels::cuda::binary_q8_x8)
