// The QLinearConv family: QLinearConv (its window: window.h, as for Conv).
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/quantized.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/window.h"

namespace jetplan::converter::ops {

namespace {

std::string check_qlinear_conv(Graph& g, Node& node) {
  const auto& [x, w, y_zp] = qlinear_operands(g, node);
  if (std::string r = quantized_reason({{x, "input"}, {w, "weight"}, {y_zp, "output zero point"}});
      !r.empty())
    return r;
  if (std::string r = spatial_rank_reason(x.shape); !r.empty()) return r;
  check_weight_rank(node, x.shape, w.shape);
  const Shape out = integer_conv_window(node, x.shape, w.shape, &node.op);
  const int64_t M = w.shape[0];
  // widen_to below adds values: no reference into g.values is used after it.
  const DataType x_type = x.dtype, w_type = w.dtype, y_type = y_zp.dtype;
  if (std::string r = check_scale_pair(g, node, 1, x_type, 1, "input"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 4, w_type, M, "weight"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 6, y_type, 1, "output"); !r.empty()) return r;
  for (size_t at : {4, 5})
    if (shape_count(input(g, node, at == 4 ? 5 : 4).shape) == M)
      if (std::string r = widen_to(g, node, at, M); !r.empty()) return r;
  QuantDesc& d = node.op.quant;
  d = QuantDesc{};
  if (has_input(node, 8)) {
    const Value& bias = input(g, node, 8);
    if (bias.dtype != DataType::kInt32)
      return cat("bias '", bias.name, "' is ", dtype_name(bias.dtype), " (ONNX requires int32)");
    if (bias.shape != Shape{M})
      fail("node ", node_label(node), ": shape mismatch: bias '", bias.name, "' ",
           shape_str(bias.shape), " for ", M, " output channels");
    d.has_bias = true;
  }
  return resolve_as(g, node, fb::OpFamily::QLinearConv, y_type, out);
}

constexpr OpRow kRows[] = {
    {"QLinearConv", check_qlinear_conv, "int8, uint8 (bias int32)",
     "1 to 3 spatial dims; w_scale and w_zero_point per tensor or per output channel"},
};

StepParamsOffset serialize_qlinear_conv(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const auto p = fb::CreateQLinearConvParams(
      fbb, op.groups, fbb.CreateVector(op.kernel), fbb.CreateVector(op.stride),
      fbb.CreateVector(op.dilation), fbb.CreateVector(op.pad_begin), fbb.CreateVector(op.pad_end),
      op.quant.has_bias);
  return params(p);
}

}  // namespace

const FamilyRules qlinear_conv_rules = {serialize_qlinear_conv, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
