// Explicit quantization: models that carry their own QuantizeLinear/DequantizeLinear pairs
// (quantization-aware training, ONNX Runtime's static quantizer in QDQ format, NVIDIA ModelOpt)
// run with the scales they give instead of calibrated ones.
//
// The pass runs on the imported graph, before check_support folds constants:
// - an activation pair x -> QuantizeLinear(s, 0) -> DequantizeLinear(s, 0) -> readers is
//   removed (the readers read x) and x is recorded with scale s;
// - a weight given as DequantizeLinear(int8 constant, scales, 0) keeps its node (constant
//   folding turns it into the exact float values q * s) and its per-output-channel scales are
//   recorded under the folded tensor's name; a float weight behind a Q/DQ pair (QAT exports) is
//   recorded the same way from the pair's scales.
// The INT8 pass (int8_precision.h, Int8Options::scales and weight_scales) then quantizes x with s
// and the weights with their scales, which gives back the model's integers exactly (|w / s - q|
// is far below half a unit), and requantizes each INT8 conv's output with the scale of the pair
// after it. Only what jetplan's INT8 kernels compute can be honoured: int8 with zero point 0
// (symmetric, as TensorRT requires), one scale per activation tensor, per-channel weight scales
// along the output channels; anything else is a ConvertError naming the node. A pair whose
// readers do not run in INT8 (an excluded conv, average pooling, a Gemm) is removed all the
// same: they read the unrounded value, within half a quantization step of the model's inside
// int8's range (docs/int8.md), and clipped to that range like the pair's output (the INT8 pass
// puts the clip in the producer's fused activation or a Clip step after it; graph inputs are
// not clipped).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

struct ExplicitScales {
  std::map<std::string, float> activations;           // tensor name -> scale
  std::map<std::string, std::vector<float>> weights;  // weight name -> per-output-channel scales
  size_t pairs = 0;  // activation Q/DQ pairs removed
};

// Whether the graph holds a QuantizeLinear whose every reader is a DequantizeLinear (an
// activation or weight pair of the QDQ format).
bool has_qdq_pairs(const Graph& g);

// The pass above. Throws ConvertError for a pair it cannot honour, naming the node and why.
ExplicitScales remove_qdq_pairs(Graph& g);

// Whether the clip to [lo, hi] (a removed pair's int8 range, where its tensor stays float) joined
// op's fused activation: op's family runs one (Conv, Gemm, Binary) and the two clips make one.
bool fuse_int8_range_clip(OpDesc* op, float lo, float hi);

}  // namespace jetplan::converter
