// The ConvTranspose family: parameters and CPU twin (kernels/cpu/conv_transpose.cc); CUDA
// kernels in kernels/cuda/conv_transpose.cu (index math shared: kernels/conv_transpose_math.h).
#pragma once

#include <cstdint>

#include "kernels/conv.h"
#include "kernels/host_device.h"

namespace jetplan::kernels {

// y = act(convT(x, w) + bias + residual), the adjoint of ConvParams' convolution:
// x [batch, in_channels, *in_size], w [in_channels, out_channels / groups, *kernel],
// bias [out_channels] (optional), residual and y [batch, out_channels, *out_size], and
// y[n, oc, o] sums x[n, ic, i] * w[ic, oc % (out_channels / groups), k] over the input channels ic
// of oc's group and every (i, k) with o = i * stride - pad_begin + k * dilation.
// out_size is explicit (ONNX output_shape, or stride * (in - 1) + output_padding +
// (kernel - 1) * dilation + 1 - pad_begin - pad_end): pad_end and output_padding are implied by it.
// channels_last (GPU plans; only the upsampling form, conv_transpose_upsamples: 2-D, kernel ==
// stride, no pads, dilation 1, groups 1, out = in * stride): x [batch, H, W, in_channels], w
// [KH, KW, out_channels, in_channels] (the GEMM's B matrix [KH * KW * Cout, Cin]), residual and y
// [batch, H * KH, W * KW, out_channels].
struct ConvTransposeParams {
  JP_CONV_FIELDS;  // as ConvParams
  bool channels_last = false;
  // channels_last only, as ConvParams: y holds y_channels >= out_channels channels a pixel and
  // this step writes [y_channel_offset, +out_channels) of them (a Concat along channels written
  // in place; a residual stays dense). 0: y_channels = out_channels, the dense output.
  int64_t y_channels = 0;
  int64_t y_channel_offset = 0;
};

// The upsampling form: every output position takes exactly one tap of one input position, so
// the step is a GEMM [N * H * W, Cin] x [Cin, KH * KW * Cout] whose rows scatter.
JP_HD inline bool conv_transpose_upsamples(const ConvTransposeParams& p) {
  if (p.spatial_rank != 2 || p.groups != 1) return false;
  for (int d = 0; d < 2; ++d)
    if (p.stride[d] < 1 || p.kernel[d] != p.stride[d] || p.dilation[d] != 1 ||
        p.pad_begin[d] != 0 || p.out_size[d] != p.in_size[d] * p.stride[d])
      return false;
  return true;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void conv_transpose(const ConvTransposeParams& p, const float* x, const float* w,
                    const float* bias, const float* residual, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/conv_transpose.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// The _igemm rows (channels_last upsampling, FP16) are Conv's implicit-GEMM tiles
// (kernels/cuda/conv_igemm.cuh): their blocks and dynamic shared memory are conv.h's rows of the
// same tiles (Igemm::kSharedBytes); they never split K (grid z 1, no workspace).
#define JP_CUDA_VARIANTS_conv_transpose(X, F) \
  X(F, jp_conv_transpose_f16, kF16, 0) \
  X(F, jp_conv_transpose_f32, kF32, 0) \
  X(F, jp_conv_transpose_upsample_f16, kF16, 0) \
  X(F, jp_conv_transpose_upsample_f32, kF32, 0) \
  X(F, jp_conv_transpose_upsample_igemm_128x128_f16, kF16, 256, kAny, 128 * (128 + 8) * 4) \
  X(F, jp_conv_transpose_upsample_igemm_64x64_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2) \
  X(F, jp_conv_transpose_upsample_igemm_32x64_f16, kF16, 128, kAny, 4 * (32 + 64) * 40 * 2) \
  X(F, jp_conv_transpose_upsample_igemm_64x64_anyc_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2)
