// The LayerNorm family: LayerNormalization over the dims from axis on (scale and bias broadcast
// to them; Mean and InvStdDev written where read), and RMSNormalization (opset 23) as its RMS
// form (no mean subtracted, no bias, no statistics outputs).
#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/normalization.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

// Input i (scale or bias) of a LayerNormalization, which broadcasts to the normalized shape:
// the value the step reads, with one element per normalized element (a constant is expanded
// now), or -1 with *reason set.
int layer_norm_param(Graph& g, const Node& node, size_t i, const Shape& normalized,
                     std::string* reason) {
  const Value& v = input(g, node, i);
  Shape b;
  if (!broadcast_shapes(v.shape, normalized, &b) || b != normalized)
    fail("node ", node_label(node), ": shape mismatch: '", v.name, "' ", shape_str(v.shape),
         " does not broadcast to the normalized shape ", shape_str(normalized));
  if (shape_count(v.shape) == shape_count(normalized)) return node.inputs[i];
  if (!v.is_constant) {
    *reason = cat("its input '", v.name, "' ", shape_str(v.shape),
                  " broadcasts to the normalized shape and is computed at run time (jetplan "
                  "needs it constant or of the normalized shape)");
    return -1;
  }
  const std::vector<int64_t> index = fold::broadcast_index(v.shape, normalized);
  std::vector<uint8_t> data(index.size() * sizeof(float));
  for (size_t k = 0; k < index.size(); ++k)
    std::copy_n(v.data.begin() + index[k] * sizeof(float), sizeof(float),
                data.begin() + k * sizeof(float));
  return new_constant(g, v.name + ":" + shape_str(normalized), DataType::kFloat32, normalized,
                      std::move(data));
}

std::string check_layer_norm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  if (std::string r = check_stash_type(node); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": LayerNormalization of a scalar");
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", -1), rank);
  const Shape normalized(x.begin() + axis, x.end());
  std::string reason;
  const int scale = layer_norm_param(g, node, 1, normalized, &reason);
  if (scale < 0) return reason;
  const bool has_bias = has_input(node, 2);
  const int bias = has_bias ? layer_norm_param(g, node, 2, normalized, &reason) : -1;
  if (has_bias && bias < 0) return reason;
  node.inputs = {node.inputs[0], scale};
  if (has_bias) node.inputs.push_back(bias);
  OpDesc& nn = node.op;
  nn.has_bias = has_bias;
  node.op.axis = static_cast<int32_t>(axis);
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  node.op.family = fb::OpFamily::LayerNorm;
  set_output(g, node, x);
  // Mean and InvStdDev: written when something reads them, dropped otherwise.
  Shape stats(x.begin(), x.begin() + axis);
  stats.resize(x.size(), 1);
  node.outputs.resize(3, -1);
  for (size_t i = 1; i < 3; ++i) {
    if (!is_used(g, node.outputs[i])) {
      node.outputs[i] = -1;
      continue;
    }
    (i == 1 ? nn.has_mean : nn.has_inv_std_dev) = true;
    set_output_typed(g, node, i, DataType::kFloat32, stats);
  }
  return "";
}

// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2) over dims [axis, rank) + epsilon) * scale,
// scale broadcasting to the normalized shape; the LayerNorm step with rms set.
std::string check_rms_norm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  if (std::string r = check_stash_type(node); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": RMSNormalization of a scalar");
  const int64_t axis =
      normalize_axis(node, attr_int(node, "axis", -1), static_cast<int64_t>(x.size()));
  std::string reason;
  const int scale = layer_norm_param(g, node, 1, Shape(x.begin() + axis, x.end()), &reason);
  if (scale < 0) return reason;
  node.inputs = {node.inputs[0], scale};
  node.op.rms = true;
  node.op.axis = static_cast<int32_t>(axis);
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  node.op.family = fb::OpFamily::LayerNorm;
  set_output(g, node, x);
  return "";
}

constexpr OpRow kRows[] = {
    {"LayerNormalization", check_layer_norm, "float32",
     "any axis; stash_type 1; scale and bias broadcast to the normalized shape; Mean and "
     "InvStdDev outputs written where read"},
    {"RMSNormalization", check_rms_norm, "float32",
     "any axis; stash_type 1; scale broadcasts to the normalized shape", 23},
};

StepParamsOffset serialize_layer_norm(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  return params(fb::CreateLayerNormParams(fbb, op.axis, op.epsilon, op.has_bias, op.has_mean,
                                          op.has_inv_std_dev, &act, op.rms));
}

}  // namespace

const FamilyRules layer_norm_rules = {serialize_layer_norm, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
