// The Conv family: its parameters and CPU twin (kernels/cpu/conv.cc); CUDA kernels in
// kernels/cuda/conv.cu.
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"
#include "kernels/dtype.h"
#include "kernels/host_device.h"
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

// An INT8 conv (GPU plans, channels_last; the CPU twin also takes NCHW): x and w Int8 with zero
// point 0, w's scale per output channel, sums in int32. Input 2 (has_bias is set) is the channel
// epilogue, float32 [2, Cout]: for output channel oc, real = acc * epi[oc] + epi[Cout + oc] (x's
// scale times w's scale of oc, then the bias), evaluated as one fmaf. Then the residual (Int8:
// fmaf(r, residual_scale, real); a float one: added), the activation, and y: Int8 =
// saturate(rint(real * y_inv_scale)), NaN to 0 (kernels/int8_epilogue.h), or a float rounded to
// nearest. The CPU twin (cpu::conv_int8) runs the same float operations in the same order, so GPU
// and CPU outputs are equal bit for bit for the piecewise-linear activations (none, Relu,
// LeakyRelu, Clip); the others may differ by one unit of y (the device's fast exp, contracted
// multiply-adds). The CUDA kernels write Int8 or Float16 and read an Int8 or Float16 residual;
// the CPU twin also Float32 (a CPU plan's float tensors).
struct ConvInt8 {
  bool enabled = false;
  DType y_dtype = DType::kInt8;
  DType residual_dtype = DType::kInt8;  // has_residual says whether there is one
  float residual_scale = 1.f;           // an Int8 residual's
  float y_inv_scale = 1.f;              // 1 / an Int8 y's scale, computed once at plan load
};

// y = act(conv(x, w) + bias + residual), or act(conv(x, w) + bias) + residual
// (residual_after_act)
// x [batch, in_channels, *in_size], w [out_channels, in_channels / groups, *kernel],
// bias [out_channels] (optional), residual and y [batch, out_channels, *out_size].
// channels_last: x [batch, *in_size, in_channels], w [out_channels, *kernel, in_channels / groups],
// residual and y [batch, *out_size, out_channels] (NHWC; GPU plans).
// Padding at the end of each dim is implied by out_size.
struct ConvParams {
  JP_CONV_FIELDS;
  bool channels_last = false;
  ConvInt8 int8;  // int8.enabled: an INT8 step (see ConvInt8)
  // channels_last only: y holds y_channels >= out_channels channels per pixel and this conv
  // writes [y_channel_offset, +out_channels) of them (a Concat along channels written in
  // place). 0: y_channels = out_channels, the dense output.
  int64_t y_channels = 0;
  int64_t y_channel_offset = 0;
  // w is a weight of the plan (written once at load, by no step): a kernel launched early
  // (KernelVariant::early_launch) may read it before it waits for the previous kernel.
  bool w_constant = false;
  // The residual joins after the activation: y = act(conv + bias) + residual (the bottlenecks
  // of YOLO-style CSP blocks, x + SiLU(conv(x))); INT8 steps the same (ConvInt8's residual
  // after the activation, then y's rounding).
  bool residual_after_act = false;
};

// Whether the tiled depthwise kernels (jp_conv_dw<K>_*, kernels/cuda/conv_depthwise.cuh)
// take a step: a 2-D NHWC depthwise conv of 8k channels with a square 3x3 or 5x5 window at
// stride 1 or 2, or 7x7 at stride 1, and dilation 1. The selection and the kernel both ask.
JP_HD_INLINE bool conv_dw_tiled_fits(const ConvParams& p) {
  if (!p.channels_last || p.spatial_rank != 2 || p.groups != p.in_channels ||
      p.out_channels != p.in_channels || p.in_channels % 8 != 0 ||
      p.in_channels >= (int64_t{1} << 23) || p.dilation[0] != 1 || p.dilation[1] != 1 ||
      p.kernel[0] != p.kernel[1] || p.stride[0] != p.stride[1])
    return false;
  const int64_t k = p.kernel[0], s = p.stride[0];
  return (((k == 3 || k == 5) && (s == 1 || s == 2)) || (k == 7 && s == 1)) &&
         p.batch * p.out_size[0] * p.out_size[1] < (int64_t{1} << 31);
}

// The stem kernels (jp_conv_stem_n{32,64}_f16, kernels/cuda/conv_stem.cuh): FP16 convs of
// groups 1, 1-D or 2-D, whose whole K = KH * KW * Cin is short (an RGB stem's 3 channels, a
// speech encoder's 1): a tile is kConvStemRows output pixels of one output row, whose KH input
// row segments (contiguous in NHWC) are loaded whole into shared memory and read from there as
// the im2col A operand, against all of K's weights held in shared memory for the CTA's life.
// ConvStemLayout places the dynamic shared memory (bytes from its start): the epilogue's float
// tile, the weights [BN][k_pad + 8] halves, the A offset of each K column (int32 [k_pad]), the
// KH row segments (row_pitch halves apart), and zeros that K's padding columns read.
constexpr int kConvStemRows = 64;
constexpr int64_t kConvStemMaxK = 256;
struct ConvStemLayout {
  int32_t k = 0, k_pad = 0;        // K, and K rounded up to 16 (one mma step)
  int32_t span = 0, row_pitch = 0;  // elements of one kernel row's x segment; its pitch
  int32_t zeros = 0;               // zeros after the rows (elements)
  uint32_t w_at = 0, off_at = 0, rows_at = 0, bytes = 0;
};
JP_HD_INLINE ConvStemLayout conv_stem_layout(const ConvParams& p, int bn) {
  ConvStemLayout l;
  const bool r1 = p.spatial_rank == 1;
  const int64_t kh = r1 ? 1 : p.kernel[0], kw = p.kernel[r1 ? 0 : 1];
  const int64_t sw = p.stride[r1 ? 0 : 1], dw = p.dilation[r1 ? 0 : 1], c = p.in_channels;
  l.k = int32_t(kh * kw * c);
  l.k_pad = (l.k + 15) / 16 * 16;
  l.span = int32_t(((kConvStemRows - 1) * sw + (kw - 1) * dw + 1) * c);
  l.row_pitch = (l.span + 7) / 8 * 8;
  l.zeros = int32_t((kConvStemRows - 1) * sw * c + 8) / 8 * 8;
  const uint32_t epi = uint32_t(kConvStemRows) * uint32_t(bn + 8) * 4;
  l.w_at = epi;
  l.off_at = l.w_at + uint32_t(bn) * uint32_t(l.k_pad + 8) * 2;
  l.rows_at = l.off_at + uint32_t(l.k_pad) * 4;
  l.bytes = l.rows_at + (uint32_t(kh) * uint32_t(l.row_pitch) + uint32_t(l.zeros)) * 2;
  return l;
}
// Whether the stem kernels take a step: the conv above with K at most kConvStemMaxK, strides and
// dilations of at most 8, at most 16 KiB of row segments, and 32-bit sizes. The selection and
// the kernels both ask (the selection also checks ConvStemLayout::bytes against the target).
JP_HD_INLINE bool conv_stem_fits(const ConvParams& p) {
  if (!p.channels_last || p.int8.enabled || p.groups != 1 ||
      (p.spatial_rank != 1 && p.spatial_rank != 2) || p.in_channels < 1 || p.out_channels < 1)
    return false;
  const int r = p.spatial_rank;
  int64_t kvol = 1, m = p.batch;
  for (int d = 0; d < r; ++d) {
    if (p.stride[d] < 1 || p.stride[d] > 8 || p.dilation[d] < 1 || p.dilation[d] > 8 ||
        p.kernel[d] < 1)
      return false;
    kvol *= p.kernel[d];
    m *= p.out_size[d];
  }
  if (kvol * p.in_channels > kConvStemMaxK || m >= (int64_t{1} << 31) ||
      p.out_channels >= (int64_t{1} << 24) || p.in_channels * p.in_size[r - 1] >= (int64_t{1} << 30))
    return false;
  const ConvStemLayout l = conv_stem_layout(p, 64);
  return int64_t(r == 1 ? 1 : p.kernel[0]) * l.row_pitch * 2 <= 16 * 1024;
}

// Whether the grouped form of the implicit-GEMM kernels (jp_conv_igemm_*_grouped_*) takes a
// step: a 1-D or 2-D NHWC conv of groups > 1 whose channels split evenly, Cin a multiple of 8
// (A loads 8 elements at a time: 16 bytes of halves, 8 of int8), a group's input channels a
// multiple of `b_half` (the elements of one of B's 8-byte loads: 4 halves, 8 int8; so not
// depthwise), and 32-bit GEMM sizes. The selection and the kernels both ask.
JP_HD_INLINE bool conv_grouped_igemm_fits(const ConvParams& p, int64_t b_half) {
  if (!p.channels_last || p.groups <= 1 || (p.spatial_rank != 1 && p.spatial_rank != 2) ||
      p.in_channels % p.groups != 0 || p.out_channels % p.groups != 0 ||
      p.in_channels % 8 != 0 || (p.in_channels / p.groups) % b_half != 0)
    return false;
  const int64_t kvol = p.kernel[0] * (p.spatial_rank == 2 ? p.kernel[1] : 1);
  const int64_t m = p.batch * p.out_size[0] * (p.spatial_rank == 2 ? p.out_size[1] : 1);
  return m < (int64_t{1} << 31) && p.out_channels < (int64_t{1} << 31) &&
         kvol * p.in_channels < (int64_t{1} << 30);
}

// The input channels an N tile of the grouped form runs K over: the tile of `bn` output channels
// from n0 covers groups n0 / cout_g to the last one holding a channel below min(n0 + bn, Cout);
// it reads from its first group's first channel rounded down to a multiple of 8 (*first) up to
// past its last group's, rounded up to one (still at most Cin, a multiple of 8). Returns the
// count.
JP_HD_INLINE int64_t conv_grouped_tile(const ConvParams& p, int64_t n0, int64_t bn,
                                       int64_t* first) {
  const int64_t cin_g = p.in_channels / p.groups, cout_g = p.out_channels / p.groups;
  const int64_t n_end = n0 + bn < p.out_channels ? n0 + bn : p.out_channels;
  const int64_t c0 = n0 / cout_g * cin_g / 8 * 8;
  const int64_t c1 = ((n_end - 1) / cout_g + 1) * cin_g;
  *first = c0;
  return (c1 - c0 + 7) / 8 * 8;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

void conv(const ConvParams& p, const float* x, const float* w, const float* bias,
          const float* residual, float* y);
// p.int8.enabled steps. epi: float32 [2, out_channels]; residual (null without one) and y: of
// p.int8's dtypes, Int8, Float16 (uint16_t bits) or Float32.
void conv_int8(const ConvParams& p, const int8_t* x, const int8_t* w, const float* epi,
               const void* residual, void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/conv.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// The igemm rows fix their block and dynamic shared memory (Igemm::kSharedBytes): the larger of
// the pipeline's STAGES * (BM + BN) * (BK + 8) halves * 2 bytes, or (BK + 16) bytes a row for the
// INT8 (_i8) ones, and the epilogue's staged tile of BM * (BN + 8) floats (the larger for the
// 128x128 tiles); conv_select.cc derives its tiles from these rows. They count split-K arrivals
// at the end of the workspace, which the runtime clears (kZeroCounters).
// The _wg rows are the Hopper tiles (sm_only 90: wgmma, kernels/cuda/wgmma.cuh), whose stages
// are 64 K of 128-byte rows (no padding) plus 1 KiB for aligning them.
// The _i8 rows read Int8 x and w and write Int8 y, the _i8_f16out rows Float16 y. The _grouped
// rows take grouped convs (conv_grouped_igemm_fits), the others groups 1. The stem rows
// (conv_stem_fits) check their dynamic shared memory themselves (ConvStemLayout::bytes). The tiled
// depthwise rows (jp_conv_dw<K>_*: window KxK) take any block of at most 256 threads and check
// their dynamic shared memory themselves (K * K * 8 * blockDim.x weights of 4 bytes).
#define JP_CUDA_VARIANTS_conv(X, F) \
  X(F, jp_conv_igemm_128x128_f16, kF16, 256, kAny, 128 * (128 + 8) * 4, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_f16, kF16, 128, kAny, 4 * (32 + 64) * 40 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_32x64k64_f16, kF16, 128, kAny, 3 * (32 + 64) * 72 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_128x128k64_f16, kF16, 256, kAny, 3 * (128 + 128) * 72 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_64x64k64_f16, kF16, 128, kAny, 4 * (64 + 64) * 72 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_anyc_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_128x128_i8, kI8, 256, kAny, 128 * (128 + 8) * 4, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_i8, kI8, 128, kAny, 4 * (64 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_i8, kI8, 128, kAny, 4 * (32 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_32x64k128_i8, kI8, 128, kAny, 3 * (32 + 64) * 144, kZeroCounters) \
  X(F, jp_conv_igemm_128x128_i8_f16out, kI8, 256, kF16, 128 * (128 + 8) * 4, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_i8_f16out, kI8, 128, kF16, 4 * (64 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_i8_f16out, kI8, 128, kF16, 4 * (32 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_32x64k128_i8_f16out, kI8, 128, kF16, 3 * (32 + 64) * 144, kZeroCounters) \
  X(F, jp_conv_igemm_64x64k128_i8, kI8, 128, kAny, 3 * (64 + 64) * 144, kZeroCounters) \
  X(F, jp_conv_igemm_64x64k128_i8_f16out, kI8, 128, kF16, 3 * (64 + 64) * 144, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_c8_i8, kI8, 128, kAny, 4 * (32 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_c8_i8_f16out, kI8, 128, kF16, 4 * (32 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_c8_i8, kI8, 128, kAny, 4 * (64 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_c8_i8_f16out, kI8, 128, kF16, 4 * (64 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_64x64_grouped_f16, kF16, 128, kAny, 4 * (64 + 64) * 40 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_grouped_f16, kF16, 128, kAny, 4 * (32 + 64) * 40 * 2, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_grouped_i8, kI8, 128, kAny, 4 * (32 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_32x64_grouped_i8_f16out, kI8, 128, kF16, 4 * (32 + 64) * 80, kZeroCounters) \
  X(F, jp_conv_igemm_wg128x128_f16, kF16, 256, kAny, 3 * (128 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_igemm_wg128x128p_f16, kF16, 256, kAny, 3 * (128 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_igemm_wg64x128_f16, kF16, 128, kAny, 4 * (64 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_igemm_wg128x128_i8, kI8, 256, kAny, 3 * (128 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_igemm_wg128x128_i8_f16out, kI8, 256, kF16, 3 * (128 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_igemm_wg64x128_i8, kI8, 128, kAny, 4 * (64 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_igemm_wg64x128_i8_f16out, kI8, 128, kF16, 4 * (64 + 128) * 128 + 1024, kZeroCounters, false, true, 90) \
  X(F, jp_conv_stem_n32_f16, kF16, 128) \
  X(F, jp_conv_stem_n64_f16, kF16, 128) \
  X(F, jp_conv_dw3_f16, kF16, 0) \
  X(F, jp_conv_dw5_f16, kF16, 0) \
  X(F, jp_conv_dw7_f16, kF16, 0) \
  X(F, jp_conv_dw3_i8, kI8, 0) \
  X(F, jp_conv_dw3_1row_i8, kI8, 0) \
  X(F, jp_conv_dw5_i8, kI8, 0) \
  X(F, jp_conv_dw7_i8, kI8, 0) \
  X(F, jp_conv_dw3_i8_f16out, kI8, 0, kF16) \
  X(F, jp_conv_dw3_1row_i8_f16out, kI8, 0, kF16) \
  X(F, jp_conv_dw5_i8_f16out, kI8, 0, kF16) \
  X(F, jp_conv_dw7_i8_f16out, kI8, 0, kF16) \
  X(F, jp_conv_depthwise_f16, kF16, 0) \
  X(F, jp_conv_depthwise_i8, kI8, 0) \
  X(F, jp_conv_depthwise_i8_f16out, kI8, 0, kF16) \
  X(F, jp_conv_direct_f16, kF16, 0) \
  X(F, jp_conv_direct_f32, kF32, 0) \
  X(F, jp_conv_igemm_f32, kF32, 256)
