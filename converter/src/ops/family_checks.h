// Check functions (registry.h, CheckFn) that one family's file defines and another family's
// check hands nodes to: the family of these ONNX ops depends on their inputs.
#pragma once

#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::ops {

// Float32 two-input arithmetic (binary.cc); the Elementwise family's checks hand it Add, Sub,
// Mul, Div, Max, Min and Pow of float32.
std::string check_binary(Graph& g, Node& node);
// Transpose by the perm attribute (transpose.cc); Einsum hands it a one-operand permutation.
std::string check_transpose(Graph& g, Node& node);
// QuantizeLinear and DequantizeLinear (quantized.cc), whose rows are the Quantize and
// Dequantize families'.
std::string check_quantize_linear(Graph& g, Node& node);

}  // namespace jetplan::converter::ops
