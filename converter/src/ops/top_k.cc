// The TopK family: ONNX TopK (both outputs written; the indices are int64).
#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_topk(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;  // a copy: new values may move g.values below
  if (x.empty()) fail("node ", node_label(node), ": TopK of a scalar");
  const int64_t axis =
      normalize_axis(node, attr_int(node, "axis", -1), static_cast<int64_t>(x.size()));
  int64_t k = 0;
  if (g.opset < 10) {
    if (!has_attr(node, "k")) fail("node ", node_label(node), ": the k attribute is missing");
    k = attr_int(node, "k", 0);
  } else {
    const Value& kv = input(g, node, 1);
    if (!kv.is_constant) return run_time_reason("K");
    const std::vector<int64_t> ks = read_ints(kv);
    if (ks.size() != 1) fail("node ", node_label(node), ": K has ", ks.size(), " elements, not 1");
    k = ks[0];
  }
  if (k < 0 || k > x[axis])
    fail("node ", node_label(node), ": k = ", k, " is outside [0, ", x[axis], "] (axis ", axis,
         " of ", shape_str(x), ")");
  node.op.largest = attr_int(node, "largest", 1) != 0;
  node.op.axis = static_cast<int32_t>(axis);
  node.op.family = fb::OpFamily::TopK;
  node.op.workspace_bytes = static_cast<uint64_t>(x[axis]) * sizeof(int64_t);
  node.inputs.resize(1);
  // The step writes both outputs; one the model leaves unnamed gets a value of its own.
  node.outputs.resize(2, -1);
  Shape out = x;
  out[axis] = k;
  if (node.outputs[1] < 0)
    node.outputs[1] = new_value(g, node.name + ":indices", DataType::kInt64, out);
  if (node.outputs[0] < 0)
    node.outputs[0] = new_value(g, node.name + ":values", DataType::kFloat32, out);
  set_output_typed(g, node, 0, DataType::kFloat32, out);
  set_output_typed(g, node, 1, DataType::kInt64, out);
  return "";
}

constexpr OpRow kRows[] = {
    {"TopK", check_topk, "float32 -> float32, int64",
     "K constant (0: empty outputs, no step); any axis; largest 0 or 1 (sorted)"},
};

StepParamsOffset serialize_top_k(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateTopKParams(fbb, s.op.axis, s.op.largest));
}

}  // namespace

const FamilyRules top_k_rules = {serialize_top_k, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
