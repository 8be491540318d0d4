// The LayerNorm family: parameters and CPU twin (kernels/cpu/layer_norm.cc); CUDA kernels in
// kernels/cuda/layer_norm.cu.
// Statistics are the population mean and variance (divide by the count), in double, two passes
// in increasing index order (kernels/cpu/moments.h); y = act(scale * (x - mean) / sqrt(var +
// epsilon) + bias). With rms (ONNX RMSNormalization) the mean is taken as 0: y = act(scale * x /
// sqrt(mean(x^2) + epsilon) + bias).
#pragma once

#include <cstdint>

#include "kernels/activation_function.h"
#include "kernels/host_device.h"

namespace jetplan::kernels {

// x and y [outer, inner], inner the product of dims [axis, rank); statistics per row; scale and
// bias [inner] (a scale that ONNX broadcasts to the normalized shape is expanded by the converter).
// The optional outputs mean and inv_std_dev are [outer] (ONNX shape [d0 .. d(axis-1), 1, .., 1]).
struct LayerNormParams {
  int64_t outer = 1;
  int64_t inner = 0;
  float epsilon = 1e-5f;
  bool has_bias = false;
  Activation act;
  bool rms = false;  // root mean square: no mean subtracted (a step with it writes no mean)
  // The optional statistics, [outer] values of the step's dtype: the step's output index of the
  // mean and of inv_std_dev (1 or 2), 0 where the step has none.
  int32_t mean_output = 0;
  int32_t inv_std_output = 0;
  // An INT8 plan's LayerNorm writing Int8 for INT8 readers (a transformer's LayerNorm in front
  // of an INT8 GEMM): the step's input index of the Float32 inverse of y's scale, 0 where y is
  // float. y = int8_quantize(act(...), inv_y) (kernels/int8_epilogue.h); no statistics outputs.
  int32_t inv_scale_input = 0;
};

// Whether the lanes-a-row kernel (jp_layer_norm_warp_f16) takes a step: rows of 8k elements, at
// most 256 (a 16-byte chunk a lane, at most a warp a row), and no statistics outputs (the block
// kernels write those). Longer rows (a transformer's 384 to 1024) ran faster a block a row:
// ViT-B's 197 rows of 768 at batch 1, ConvNeXt-T's of 384 and 768 at batch 8 (H200). The
// selection and the kernel both ask.
JP_HD_INLINE bool layer_norm_warp_fits(const LayerNormParams& p) {
  return p.inner >= 8 && p.inner <= 256 && p.inner % 8 == 0 && p.outer >= 1 &&
         p.mean_output == 0 && p.inv_std_output == 0;
}

// Whether a step writes Int8 (inv_scale_input): then it writes no statistics.
JP_HD_INLINE bool layer_norm_to_int8(const LayerNormParams& p) { return p.inv_scale_input > 0; }

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// bias may be null without has_bias; mean and inv_std_dev are optional outputs (null: not
// written).
void layer_norm(const LayerNormParams& p, const float* x, const float* scale, const float* bias,
                float* y, float* mean, float* inv_std_dev);

// The Int8 form (p.inv_scale_input): each output the float one would be, rounded by
// int8_quantize(value, inv_y). The CUDA kernels take the statistics in float (block or lane
// reductions), this twin in double, so an output on a rounding boundary may differ by one unit.
void layer_norm_to_int8(const LayerNormParams& p, const float* x, const float* scale,
                        const float* bias, float inv_y, int8_t* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernels of kernels/cuda/layer_norm.cu, one row each, gathered into the variant table by
// kernels/cuda/variants.cc (columns: kernels/cuda/variants.h, JP_CUDA_VARIANT_COLUMNS).
// A block of 256 threads per row (block reductions over 8 warps; these also write the mean and
// inv_std_dev outputs); _warp: 4 to 32 lanes a row (layer_norm_warp_fits), blocks of 256 threads;
// _q8: the same, writing Int8 (layer_norm_to_int8).
#define JP_CUDA_VARIANTS_layer_norm(X, F) \
  X(F, jp_layer_norm_f16, kF16, 256) \
  X(F, jp_layer_norm_f32, kF32, 256) \
  X(F, jp_layer_norm_warp_f16, kF16, 256) \
  X(F, jp_layer_norm_q8_f16, kF16, 256, kI8) \
  X(F, jp_layer_norm_q8_f32, kF32, 256, kI8) \
  X(F, jp_layer_norm_warp_q8_f16, kF16, 256, kI8)
