// The arithmetic of the INT8 epilogues (Conv's INT8 steps, kernels/conv.h ConvInt8), written once
// for the CPU twins and the CUDA kernels so that both run the same float operations in the same
// order: an int32 sum becomes its real value through one fmaf with the channel's multiplier and
// bias, an Int8 residual joins through one more fmaf, and the result is requantized with one
// multiply by the inverse scale and a round to nearest even. fmaf, the int-to-float conversion
// and the multiply are correctly rounded on both sides, so the bits agree.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/scalar_ops.h"

namespace jetplan::kernels {

// The real value of output channel oc's int32 sum: acc * mult + shift in one rounding. acc
// converts to float with round to nearest (exact below 2^24).
JP_HD_INLINE float int8_real(int32_t acc, float mult, float shift) {
  return fmaf(static_cast<float>(acc), mult, shift);
}

// real + r * scale in one rounding (an Int8 residual).
JP_HD_INLINE float int8_add_residual(float real, int32_t r, float scale) {
  return fmaf(static_cast<float>(r), scale, real);
}

// An Int8 Add's real value (kernels/binary.h binary_add_int8): a * a_scale + b * b_scale, the
// product b * b_scale rounded once and the rest in one fmaf.
JP_HD_INLINE float int8_add_real(int32_t a, float a_scale, int32_t b, float b_scale) {
  return fmaf(static_cast<float>(a), a_scale, static_cast<float>(b) * b_scale);
}

// saturate(round_half_even(real * inv_scale)) into [-128, 127]; NaN gives 0. The host rounds
// without consulting the floating-point environment (scalar_ops.h). The device does all of it in
// one instruction, PTX's cvt.rni.sat.s8.f32 (round to nearest even, saturate to s8, NaN to 0:
// the same three rules), instead of a round, a NaN test and two clamps: the INT8 epilogues run
// it on every output element.
JP_HD_INLINE int8_t int8_quantize(float real, float inv_scale) {
#if defined(__CUDA_ARCH__)
  int32_t q;
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(q) : "f"(real * inv_scale));
  return static_cast<int8_t>(q);
#else
  const float q = scalar_host::round_half_even(real * inv_scale);
  if (!(q == q)) return 0;
  return static_cast<int8_t>(q >= 127.f ? 127 : (q <= -128.f ? -128 : static_cast<int32_t>(q)));
#endif
}

}  // namespace jetplan::kernels
