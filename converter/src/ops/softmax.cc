// The Softmax family: Softmax and LogSoftmax (the opset < 13 form runs on a 2-D view: its
// expansion).
#include <utility>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

namespace {

// Before opset 13, softmax flattens x to 2-D at `axis` and normalizes each row; since then it
// normalizes along the one dim `axis`. The plan step has the opset 13 meaning, so the old one
// either maps onto one dim (when at most one of the flattened trailing dims exceeds 1) or runs
// on a 2-D view of x (lower() adds the Copy steps).
std::string check_softmax(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) fail("node ", node_label(node), ": softmax of a scalar");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", g.opset < 13 ? 1 : -1), rank);
  node.op.family = fb::OpFamily::Softmax;
  node.op.log = node.op_type == "LogSoftmax";
  node.op.masked_rows_zero = attr_int(node, kSoftmaxMaskedRowsZero, 0) != 0;
  node.op.axis = static_cast<int32_t>(axis);
  if (g.opset < 13) {
    int wide = 0;
    int64_t last_wide = rank - 1;
    for (int64_t i = axis; i < rank; ++i)
      if (x[i] != 1) {
        ++wide;
        last_wide = i;
      }
    if (wide <= 1) {
      node.op.axis = static_cast<int32_t>(last_wide);
    } else {
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x[i];
      node.op.softmax_view = {outer, inner};
      node.op.axis = 1;
    }
  }
  set_output(g, node, x);
  return "";
}

constexpr const char* kOpset13Notes = "before opset 13 (2-D flattening at axis) through a 2-D view";

constexpr OpRow kRows[] = {
    {"LogSoftmax", check_softmax, "float32", kOpset13Notes},
    {"Softmax", check_softmax, "float32", kOpset13Notes},
};

StepParamsOffset serialize_softmax(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateSoftmaxParams(fbb, s.op.axis, s.op.log, s.op.masked_rows_zero));
}

// At legalize: softmax before opset 13 over several flattened dims runs on a 2-D view.
bool expand_softmax_view(Graph& g, Node& node, std::vector<Node>* out) {
  if (node.op.softmax_view.empty()) return false;
  const Shape view_shape = node.op.softmax_view;
  node.op.softmax_view.clear();
  node.inputs[0] = view_of(g, node.inputs[0], view_shape, node.name + ":2d", out);
  const int y = node.outputs[0];
  const int y2 = new_value(g, g.values[y].name + ":2d", DataType::kFloat32, view_shape);
  return append_with_output_view(node, y2, node.name + ":nd", out);
}

}  // namespace

const FamilyRules softmax_rules = {serialize_softmax, expand_softmax_view, rows_of(kRows)};

}  // namespace jetplan::converter::ops
