// What the quantized families share (Quantize, Dequantize, QLinearMatMul, QLinearConv and the
// integer products MatMulInteger and ConvInteger, which resolve to a Dequantize placeholder):
// the checks of their operands' types, scales and zero points, the shapes of their matrix
// products.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "converter/src/ir/graph.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

bool is_quantized(DataType t);  // int8 or uint8
// "<role> '<name>' is <dtype> (jetplan's quantized ops take int8 and uint8)".
std::string not_quantized(const Value& v, const char* role);
// An operand and its role in not_quantized's reason.
struct QuantizedOperand {
  const Value& v;
  const char* role;
};
// "" when each operand is int8 or uint8, else not_quantized of the first that is not.
std::string quantized_reason(std::initializer_list<QuantizedOperand> operands);
// The QLinear ops' (QLinearMatMul, QLinearConv) operands in ONNX's input order: a at 0 and b at 3,
// each followed by its scale and zero point, then the output's scale and zero point at 6 and 7.
// All eight are required (ConvertError naming a missing one); QLinearConv's bias (8) is not.
struct QLinearOperands {
  const Value& a;
  const Value& b;
  const Value& y_zp;
};
QLinearOperands qlinear_operands(const Graph& g, const Node& node);
// The zero point's type must be its tensor's (an ONNX type constraint): ConvertError for a
// model that breaks it.
void check_zero_point_type(const Node& node, const Value& zp, DataType want, const char* role);
// The number of scale (or zero point) entries: 1 for per-tensor, else the 1-D extent.
// ConvertError for a scale of rank > 1.
int64_t scale_entries(const Node& node, const Value& v, const char* role);
// The scale and zero point of one QLinear operand: float32 and the operand's type, with 1 entry
// or `count` (per row, column or channel). Returns a reason or "".
std::string check_scale_pair(const Graph& g, const Node& node, size_t scale_at, DataType type,
                             int64_t count, const char* role);
// Gives a per-tensor scale or zero point (input `at`) `count` entries when its partner has
// them, so that the step sees both per row/column/channel. Only constants can be widened.
std::string widen_to(Graph& g, Node& node, size_t at, int64_t count);

// The shapes of a matrix product as ONNX MatMul defines them (1-D operands, broadcast batch
// dims), restricted to what the plan's steps take: each operand's batch dims equal the
// output's or all 1.
struct MatMulShapes {
  bool a_vector = false, b_vector = false;  // 1-D operands, viewed as [1, K] and [K, 1]
  int64_t M = 0, K = 0, N = 0;
  Shape a, b;    // the operands as matrices (vectors viewed)
  Shape batch;   // the output's batch dims
  Shape y;       // ONNX's output shape (vector dims dropped)
  Shape y_step;  // the step's output: batch + [M, N]
};
// A reason, "" with *out filled, or ConvertError for inconsistent shapes.
std::string matmul_shapes(const Node& node, const Shape& a, const Shape& b, MatMulShapes* out);

// The QuantizeParams table of a Quantize or Dequantize step.
StepParamsOffset serialize_quantize_params(flatbuffers::FlatBufferBuilder& fbb,
                                           const DraftStep& step);

}  // namespace jetplan::converter::ops
