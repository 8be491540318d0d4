// The QLinearMatMul family: QLinearMatMul (1-D operands through views at expansion).
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/quantized.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

namespace {

std::string check_qlinear_matmul(Graph& g, Node& node) {
  const auto& [a, b, y_zp] = qlinear_operands(g, node);
  if (std::string r = quantized_reason({{a, "A"}, {b, "B"}, {y_zp, "output zero point"}});
      !r.empty())
    return r;
  MatMulShapes mm;
  if (std::string r = matmul_shapes(node, a.shape, b.shape, &mm); !r.empty()) return r;
  // widen_to below adds values: no reference into g.values is used after it.
  const DataType a_type = a.dtype, b_type = b.dtype, y_type = y_zp.dtype;
  if (std::string r = check_scale_pair(g, node, 1, a_type, mm.M, "A"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 4, b_type, mm.N, "B"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 6, y_type, 1, "output"); !r.empty()) return r;
  for (size_t at : {1, 2, 4, 5}) {
    const int64_t count = at < 3 ? mm.M : mm.N;
    const size_t partner = at % 3 == 1 ? at + 1 : at - 1;
    if (shape_count(input(g, node, partner).shape) == count)
      if (std::string r = widen_to(g, node, at, count); !r.empty()) return r;
  }
  QuantDesc& d = node.op.quant;
  d = QuantDesc{};
  d.a_vector = mm.a_vector;
  d.b_vector = mm.b_vector;
  return resolve_as(g, node, fb::OpFamily::QLinearMatMul, y_type, mm.y);
}

// QLinearMatMul with 1-D operands: the step multiplies matrices ([1, K] x [K, 1]) and ONNX
// drops the vector dims from the output, so views go around it.
bool expand_qlinear_matmul(Graph& g, Node& node, std::vector<Node>* out) {
  QuantDesc& d = node.op.quant;
  if (!d.a_vector && !d.b_vector) return false;
  const Shape a = g.values[node.inputs[0]].shape, b = g.values[node.inputs[3]].shape;
  if (d.a_vector) node.inputs[0] = view_of(g, node.inputs[0], {1, a[0]}, node.name + ":A", out);
  if (d.b_vector) node.inputs[3] = view_of(g, node.inputs[3], {b[0], 1}, node.name + ":B", out);
  const int onnx_out = node.outputs[0];
  Shape step_shape = g.values[onnx_out].shape;
  if (d.a_vector) step_shape.insert(step_shape.end() - (d.b_vector ? 0 : 1), 1);
  if (d.b_vector) step_shape.push_back(1);
  const int tmp = new_value(g, g.values[onnx_out].name + ":" + shape_str(step_shape),
                            g.values[onnx_out].dtype, step_shape);
  d.a_vector = d.b_vector = false;
  return append_with_output_view(node, tmp, node.name + ":Y", out);
}

constexpr OpRow kRows[] = {
    {"QLinearMatMul", check_qlinear_matmul, "int8, uint8",
     "A per tensor or per row, B per tensor or per column; batch dims of each operand equal to "
     "the output's or all 1"},
};

}  // namespace

const FamilyRules qlinear_matmul_rules = {serialize_empty<fb::QLinearMatMulParams>,
                                          expand_qlinear_matmul, rows_of(kRows)};

}  // namespace jetplan::converter::ops
