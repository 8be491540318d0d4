// DequantizeLinear on the GPU: Int8 or UInt8 x to Float32 y, or Float16 y in GPU plans, per
// tensor or per axis. Twin: kernels/cpu/dequantize.cc, with the same arithmetic: (x - zero point)
// as an exact integer, times the float32 scale in float (one rounding); a Float16 y rounds that
// float once more, to nearest even.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/dequantize.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename Q, typename T>
__device__ void dequantize(const StepPointers& ptrs, const QuantizeLinearParams& p) {
  const Q* x = static_cast<const Q*>(ptrs.in[0]);
  const float* scale = static_cast<const float*>(ptrs.in[1]);
  const Q* zp = p.has_zero_point ? static_cast<const Q*>(ptrs.in[2]) : nullptr;
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t count = p.outer * p.channels * p.inner;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t c = p.per_channel ? (i / p.inner) % p.channels : 0;
    const int32_t z = zp == nullptr ? 0 : int32_t(zp[c]);
    store_float(y, i, static_cast<float>(int32_t(x[i]) - z) * scale[c]);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

// The four (x, y) pairs; a macro argument cannot hold the template's comma, hence the wrappers.
namespace jetplan::kernels::cuda {
__device__ void dequantize_i8_f16(const StepPointers& p, const QuantizeLinearParams& q) {
  dequantize<int8_t, __half>(p, q);
}
__device__ void dequantize_i8_f32(const StepPointers& p, const QuantizeLinearParams& q) {
  dequantize<int8_t, float>(p, q);
}
__device__ void dequantize_u8_f16(const StepPointers& p, const QuantizeLinearParams& q) {
  dequantize<uint8_t, __half>(p, q);
}
__device__ void dequantize_u8_f32(const StepPointers& p, const QuantizeLinearParams& q) {
  dequantize<uint8_t, float>(p, q);
}
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_dequantize_i8_f16, QuantizeLinearParams,
               jetplan::kernels::cuda::dequantize_i8_f16)
JP_STEP_KERNEL(jp_dequantize_i8_f32, QuantizeLinearParams,
               jetplan::kernels::cuda::dequantize_i8_f32)
JP_STEP_KERNEL(jp_dequantize_u8_f16, QuantizeLinearParams,
               jetplan::kernels::cuda::dequantize_u8_f16)
JP_STEP_KERNEL(jp_dequantize_u8_f32, QuantizeLinearParams,
               jetplan::kernels::cuda::dequantize_u8_f32)
