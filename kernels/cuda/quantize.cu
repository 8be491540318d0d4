// QuantizeLinear on the GPU: Float16 or Float32 x to Int8 or UInt8 y, per tensor or per axis
// (the quantize steps in front of a GPU plan's INT8 convs, and ONNX QuantizeLinear nodes), and
// the image form into Int8 (an INT8 stem's input, transposed and padded to 8 channels). Twin:
// kernels/cpu/quantize.cc, with the same arithmetic: x / scale in float (correctly rounded on
// both sides), round half to even, + zero point, saturate; NaN gives the zero point. A half x
// widens to float exactly, so GPU and CPU outputs are equal bit for bit.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/quantize.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void quantize(const StepPointers& ptrs, const QuantizeLinearParams& p) {
  if ((p.qtype != DType::kInt8 && p.qtype != DType::kUInt8) || p.layout != QuantizeLayout::kSame)
    return;  // not a step of this kernel
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const float* scale = static_cast<const float*>(ptrs.in[1]);
  const void* zp = p.has_zero_point ? ptrs.in[2] : nullptr;
  const bool s8 = p.qtype == DType::kInt8;
  const float lo = s8 ? -128.f : 0.f, hi = s8 ? 127.f : 255.f;
  const int64_t count = p.outer * p.channels * p.inner;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t c = p.per_channel ? (i / p.inner) % p.channels : 0;
    const float z = zp == nullptr ? 0.f
                    : s8         ? float(static_cast<const int8_t*>(zp)[c])
                                 : float(static_cast<const uint8_t*>(zp)[c]);
    const float r = rintf(load_float(x, i) / scale[c]);
    // NaN compares false both ways and lands on the zero point; +-inf saturate.
    const float q = r != r ? z : fminf(hi, fmaxf(lo, r + z));
    if (s8)
      static_cast<int8_t*>(ptrs.out[0])[i] = static_cast<int8_t>(q);
    else
      static_cast<uint8_t*>(ptrs.out[0])[i] = static_cast<uint8_t>(q);
  }
}

// The image form (kernels/quantize.h): one thread a pixel reads its C values (NCHW: a warp's
// 32 pixels are 32 neighbouring floats of each channel plane) and writes the pixel's C' bytes,
// 8 at a time where C' is a multiple of 8 (the form the converter writes), the padding the zero
// point. The same quotient, rounding and saturation as quantize() above, so the same bits.
template <typename T>
__device__ void quantize_image(const StepPointers& ptrs, const QuantizeLinearParams& p) {
  if (p.layout == QuantizeLayout::kSame || p.qtype != DType::kInt8) return;  // not its step
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const float scale = static_cast<const float*>(ptrs.in[1])[0];
  const float z = p.has_zero_point ? float(static_cast<const int8_t*>(ptrs.in[2])[0]) : 0.f;
  int8_t* y = static_cast<int8_t*>(ptrs.out[0]);
  const int64_t pixels = p.outer * p.inner, cp = p.padded_channels;
  const bool wide = cp % 8 == 0;
  for (int64_t i = global_thread(); i < pixels; i += global_threads()) {
    for (int64_t c0 = 0; c0 < cp; c0 += 8) {
      uint32_t word[2] = {0, 0};
      for (int j = 0; j < 8 && c0 + j < cp; ++j) {
        const int64_t c = c0 + j;
        float q = z;
        if (c < p.channels) {
          const float r = rintf(load_float(x, quantize_image_source(p, i, c)) / scale);
          q = r != r ? z : fminf(127.f, fmaxf(-128.f, r + z));
        }
        const int8_t b = static_cast<int8_t>(q);
        if (wide) word[j / 4] |= uint32_t(uint8_t(b)) << (8 * (j % 4));
        else y[i * cp + c] = b;
      }
      if (wide) *reinterpret_cast<uint2*>(y + i * cp + c0) = make_uint2(word[0], word[1]);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_quantize_f16_i8, QuantizeLinearParams, jetplan::kernels::cuda::quantize<__half>)
JP_STEP_KERNEL(jp_quantize_f32_i8, QuantizeLinearParams, jetplan::kernels::cuda::quantize<float>)
JP_STEP_KERNEL(jp_quantize_f16_u8, QuantizeLinearParams, jetplan::kernels::cuda::quantize<__half>)
JP_STEP_KERNEL(jp_quantize_f32_u8, QuantizeLinearParams, jetplan::kernels::cuda::quantize<float>)
JP_STEP_KERNEL(jp_quantize_image_f16_i8, QuantizeLinearParams,
               jetplan::kernels::cuda::quantize_image<__half>)
JP_STEP_KERNEL(jp_quantize_image_f32_i8, QuantizeLinearParams,
               jetplan::kernels::cuda::quantize_image<float>)
