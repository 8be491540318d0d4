// The Binary family on the GPU (numpy broadcasting by strides), FP16 and FP32 storage, FP32
// arithmetic with binary_value and the fused activation_value (kernels/scalar_ops.h); an Add of
// Int8 tensors with requantization; a float Binary writing Int8 for INT8 readers. Twin:
// kernels/cpu/binary.cc.
#include <cuda_fp16.h>

#include "kernels/binary.h"
#include "kernels/cuda/elementwise_loops.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/int8_epilogue.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T, bool X8 = false>
__device__ void binary(const StepPointers& ptrs, const BinaryParams& p) {
  const auto f = [&p](float a, float b) {
    return activation_value(p.act, binary_value(p.op, a, b));
  };
  broadcast2<T, T, BinaryParams, decltype(f), X8>(ptrs, p, f);
}
// The 8-wide forms (broadcast2_half8: eight outputs a thread), kernels of their own so that the
// small steps' element-wise kernels keep their code (in one kernel with them they ran about a
// microsecond slower a launch: MobileNetV3-S at batch 1, H200).
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
  const auto f = [&p, inv_y](float a, float b) {
    return int8_quantize(activation_value(p.act, binary_value(p.op, a, b)), inv_y);
  };
  broadcast2<T, int8_t, BinaryParams, decltype(f), X8>(ptrs, p, f);
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
