// The Conv family: its parameters and CPU twin (kernels/cpu/conv.cc); CUDA kernels in
// kernels/cuda/conv.cu.
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// The fields that ConvParams and ConvTransposeParams share, in their order: spatial_rank
// (1..kMaxSpatial), batch, the channel counts and groups, the window (JP_SPATIAL_WINDOW_FIELDS),
// whether bias and residual are given, and the activation applied last.
#define JP_CONV_FIELDS                    \
  int32_t spatial_rank = 2;               \
  int64_t batch = 1;                      \
  int64_t in_channels = 0;                \
  int64_t out_channels = 0;               \
  int64_t groups = 1;                     \
  JP_SPATIAL_WINDOW_FIELDS;               \
  bool has_bias = false;                  \
  bool has_residual = false;              \
  Activation act

// y = act(conv(x, w) + bias + residual)
// x [batch, in_channels, *in_size], w [out_channels, in_channels / groups, *kernel],
// bias [out_channels] (optional), residual and y [batch, out_channels, *out_size].
// channels_last: x [batch, *in_size, in_channels], w [out_channels, *kernel, in_channels / groups],
// residual and y [batch, *out_size, out_channels] (NHWC; GPU plans).
// Padding at the end of each dim is implied by out_size.
struct ConvParams {
  JP_CONV_FIELDS;
  bool channels_last = false;
  // channels_last only: y holds y_channels >= out_channels channels per pixel and this conv
  // writes [y_channel_offset, +out_channels) of them (a Concat along channels written in
  // place). 0: y_channels = out_channels, the dense output.
  int64_t y_channels = 0;
  int64_t y_channel_offset = 0;
};

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void conv(const ConvParams& p, const float* x, const float* w, const float* bias,
          const float* residual, float* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/conv.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// The igemm rows fix their block and dynamic shared memory: STAGES * (BM + BN) * (BK + 8)
// halves * 2 bytes (conv_select.cc derives its tiles from these rows); they count split-K
// arrivals in the workspace, hence zero_workspace.
#define JP_CUDA_VARIANTS_conv(X, F) \
  X(F, jp_conv_igemm_128x128_f16, kF16, 256, kAny, 3 * (128 + 128) * 40 * 2, true) \
  X(F, jp_conv_igemm_64x64_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2, true) \
  X(F, jp_conv_igemm_32x64_f16, kF16, 128, kAny, 4 * (32 + 64) * 40 * 2, true) \
  X(F, jp_conv_igemm_32x64k64_f16, kF16, 128, kAny, 3 * (32 + 64) * 72 * 2, true) \
  X(F, jp_conv_igemm_64x64_anyc_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2, true) \
  X(F, jp_conv_depthwise_f16, kF16, 0) \
  X(F, jp_conv_direct_f16, kF16, 0)
