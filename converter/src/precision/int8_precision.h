// INT8 precision for GPU plans (jetplan-convert --precision int8): after the NHWC layout pass and
// before the Float16 one, the convolutions the INT8 kernels take run in INT8, and so do the GEMMs
// with constant weights, as 1x1 convolutions (int8_gemm.h).
//
// Scales are symmetric (zero point 0): an activation tensor's scale is its calibrated amax / 127
// (per tensor), a weight's is max |w| / 127 per output channel. An INT8 conv reads Int8 x (the
// producer's Int8 output where every reader of that tensor is an INT8 conv, otherwise a Quantize
// step from Float16 in front of it) and Int8 weights; its channel epilogue (x's scale times the
// weight's, then the bias) turns the int32 sums into real values, which it writes as Int8 (where
// every reader is again an INT8 conv) or as Float16. Data movement between INT8 steps moves
// Int8 without requantizing: max pools, Concats and nearest or linear Resizes, whose tensors
// then share one scale (the largest of their ranges); an Add of two Int8 tensors requantizes
// into an Int8 output, and a float Binary whose only readers are INT8 steps (a squeeze-excitation
// Mul in front of an INT8 conv) writes Int8 itself. Nothing else changes: every other step
// stays FP16, so a plan mixes precisions step by step (kernels/conv.h ConvInt8).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "converter/src/lower/lower.h"

namespace jetplan::converter {

struct Int8Options {
  // The calibrated amax of each activation tensor, by its name in the FP32 CPU plan (a GPU
  // draft's tensor "<name>:nhwc" is the NHWC twin of "<name>"). A tensor without one, or with
  // an amax that is not positive and finite, stays Float16.
  std::map<std::string, float> amax;
  // Steps kept in Float16 by name (--int8-exclude): a step's name or the ONNX node it came from.
  std::set<std::string> exclude;
  // Explicit quantization (explicit_qdq.h): scales the model gives, by the FP32 graph's tensor
  // names. An activation's scale wins over its amax; a conv weight with scales (one, or one per
  // output channel) is quantized with them, saturating to [-128, 127], instead of max |w| / 127.
  std::map<std::string, float> scales;
  std::map<std::string, std::vector<float>> weight_scales;
};

// One INT8 step the pass made: its name, its output tensor's name, that output's scale (0 where
// the step writes Float16) and its op.
struct Int8Step {
  std::string step, output;
  float y_scale = 0.f;
  std::string op;  // what it computes, e.g. "Conv+Add+Relu" (the fused residual and activation)
};

// What the pass did, for the converter's report.
struct Int8Summary {
  // the convs (GEMMs included) that run in INT8 and the Binary steps writing Int8, in plan order
  std::vector<Int8Step> steps;
  size_t int8_gemms = 0;        // of them, the Gemm steps run as 1x1 convs (int8_gemm.h)
  size_t quantize_steps = 0;  // Float16 -> Int8 steps added in front of them
  size_t padded_inputs = 0;   // of them, those padding channels (int8_padded_channels)
  size_t int8_tensors = 0;    // activations stored as Int8 between INT8 convs
  size_t int8_pools = 0;      // max pools between them that move Int8 (no requantization)
  size_t int8_concats = 0;    // Concats on Int8: their inputs and output share one scale
  size_t int8_resizes = 0;    // Resizes on Int8 (nearest or linear, the input's scale)
  size_t int8_adds = 0;       // Adds of Int8 tensors into Int8 (requantized, binary_add_int8)
  // Float Binary steps writing Int8 for INT8 readers (binary_to_int8; in `steps` as well)
  size_t int8_binary_outputs = 0;
  // LayerNorm steps writing Int8 for INT8 readers (layer_norm_to_int8; in `steps` as well)
  size_t int8_norm_outputs = 0;
  // Attention steps writing Int8 for an INT8 output projection (attention_to_int8; in `steps`)
  size_t int8_attention_outputs = 0;
  // Clip steps that give a float tensor its removed Q/DQ pair's saturation (where no producer's
  // fused activation could take the clip).
  size_t saturation_steps = 0;
  std::vector<std::string> kept_fp16;  // convs left in Float16, each with the reason
};

// Rewrites the draft's eligible Conv steps to INT8 (see above). Run after gpu_layout and before
// gpu_precision; the tensors it adds that must stay Float32 are marked keep_float32.
Int8Summary int8_precision(PlanDraft* draft, const Int8Options& options);

}  // namespace jetplan::converter
