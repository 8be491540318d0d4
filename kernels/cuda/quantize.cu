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
// point. The same quotient, rounding and saturation as quantize() above, so the same bits. The
// pixel's first element and the stride between its channels come from one division a pixel,
// in 32 bits where the tensor allows (I), and its bytes are packed in registers.
template <typename T, typename I>
__device__ void quantize_image_walk(const StepPointers& ptrs, const QuantizeLinearParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const float scale = static_cast<const float*>(ptrs.in[1])[0];
  const float z = p.has_zero_point ? float(static_cast<const int8_t*>(ptrs.in[2])[0]) : 0.f;
  int8_t* y = static_cast<int8_t*>(ptrs.out[0]);
  const I pixels = I(p.outer * p.inner), inner = I(p.inner), channels = I(p.channels),
          cp = I(p.padded_channels);
  const bool nchw = p.layout == QuantizeLayout::kNchwToNhwcPadded;
  const I stride = nchw ? inner : 1;
  const uint32_t zbyte = uint8_t(int8_t(z));
  for (I i = I(global_thread()); i < pixels; i += I(global_threads())) {
    I src = i * channels;  // NHWC: the pixel's channels are neighbours
    if (nchw) {
      const I n = i / inner;
      src = n * channels * inner + (i - n * inner);
    }
    for (I c0 = 0; c0 < cp; c0 += 8) {
      uint32_t word[2];
#pragma unroll
      for (int w = 0; w < 2; ++w) {
        uint32_t packed = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const I c = c0 + 4 * w + j;
          uint32_t b = zbyte;
          if (c < channels) {
            const float r = rintf(load_float(x, src + c * stride) / scale);
            b = uint8_t(int8_t(r != r ? z : fminf(127.f, fmaxf(-128.f, r + z))));
          }
          packed |= b << (8 * j);
        }
        word[w] = packed;
      }
      int8_t* out = y + i * cp + c0;
      if (cp % 8 == 0) {
        *reinterpret_cast<uint2*>(out) = make_uint2(word[0], word[1]);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          if (c0 + j < cp) out[j] = int8_t(uint8_t(word[j / 4] >> (8 * (j % 4))));
      }
    }
  }
}

template <typename T>
__device__ void quantize_image(const StepPointers& ptrs, const QuantizeLinearParams& p) {
  if (p.layout == QuantizeLayout::kSame || p.qtype != DType::kInt8) return;  // not its step
  // Every index of x and y below 2^31: 32-bit arithmetic.
  const int64_t elems = p.outer * p.inner * (p.padded_channels > p.channels ? p.padded_channels
                                                                             : p.channels);
  if (elems < (int64_t{1} << 31) - 8) quantize_image_walk<T, int32_t>(ptrs, p);
  else quantize_image_walk<T, int64_t>(ptrs, p);
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
