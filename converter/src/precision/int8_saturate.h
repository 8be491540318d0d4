// The INT8 pass's last step for explicitly quantized models (int8_precision.h, explicit_qdq.h):
// a tensor the model quantizes itself that stays float gets its removed Q/DQ pair's saturation.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "converter/src/lower/lower.h"

namespace jetplan::converter {

// A draft tensor's name in the FP32 graph: the NHWC twin "<name>:nhwc", the NCHW twin
// "<name>:nchw" of a tensor made NHWC (gpu_layout's Transpose back for an NCHW reader) and the
// permuted conv weight "<name>:ohwi" are "<name>" there, as are twins of twins.
std::string draft_graph_name(std::string name);

// A tensor the model quantizes itself (its Q/DQ pair removed by explicit_qdq, its scale in
// `scales` by graph name) that stays float: its readers see the pair's clip to int8's range,
// [-128 s, 127 s], as ONNX's QuantizeLinear saturates (the rounding to s's grid is not kept:
// within half a step, docs/int8.md). The clip joins its producer's fused activation where that
// is none, Relu or Clip (Conv, Gemm, Binary), else a Clip step follows the producer. Once per
// graph tensor, at the step that computes it: its layout twins (a Transpose or Copy of it) carry
// the clipped values, and a graph input's twin is left alone (an INT8 reader's quantize step
// saturates). `int8` marks the draft's Int8 tensors. Returns the number of Clip steps added.
size_t saturate_explicit(PlanDraft* draft, const std::map<std::string, float>& scales,
                         const std::vector<bool>& int8);

}  // namespace jetplan::converter
