// The ConvTranspose family: parameters and CPU twin (kernels/cpu/conv_transpose.cc); CUDA
// kernels in kernels/cuda/conv_transpose.cu (index math shared: kernels/conv_transpose_math.h).
#pragma once

#include <cstdint>

#include "kernels/conv.h"

namespace jetplan::kernels {

// y = act(convT(x, w) + bias + residual), the adjoint of ConvParams' convolution:
// x [batch, in_channels, *in_size], w [in_channels, out_channels / groups, *kernel],
// bias [out_channels] (optional), residual and y [batch, out_channels, *out_size], and
// y[n, oc, o] sums x[n, ic, i] * w[ic, oc % (out_channels / groups), k] over the input channels ic
// of oc's group and every (i, k) with o = i * stride - pad_begin + k * dilation.
// out_size is explicit (ONNX output_shape, or stride * (in - 1) + output_padding +
// (kernel - 1) * dilation + 1 - pad_begin - pad_end): pad_end and output_padding are implied by it.
struct ConvTransposeParams {
  JP_CONV_FIELDS;  // as ConvParams
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void conv_transpose(const ConvTransposeParams& p, const float* x, const float* w,
                    const float* bias, const float* residual, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/conv_transpose.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
#define JP_CUDA_VARIANTS_conv_transpose(X, F) \
  X(F, jp_conv_transpose_f16, kF16, 0) \
  X(F, jp_conv_transpose_f32, kF32, 0) \
  X(F, jp_conv_transpose_upsample_f16, kF16, 0) \
  X(F, jp_conv_transpose_upsample_f32, kF32, 0)
