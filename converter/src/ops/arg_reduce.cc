// The ArgReduce family: ArgMax and ArgMin (keepdims=0 through a view: keepdims_view.h), and
// Hardmax (an ArgMax compared with the positions).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/keepdims_view.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_arg_reduce(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": ", node.op_type, " of a scalar");
  const int64_t axis =
      normalize_axis(node, attr_int(node, "axis", 0), static_cast<int64_t>(x.size()));
  const bool keepdims = attr_int(node, "keepdims", 1) != 0;
  Shape step = x, out;
  step[axis] = 1;
  for (size_t d = 0; d < x.size(); ++d)
    if (keepdims || static_cast<int64_t>(d) != axis) out.push_back(step[d]);
  node.op.arg_kind = node.op_type == "ArgMax" ? fb::ArgKind::Max : fb::ArgKind::Min;
  node.op.select_last_index = attr_int(node, "select_last_index", 0) != 0;
  node.op.axis = static_cast<int32_t>(axis);
  return resolve_reduced(g, node, fb::OpFamily::ArgReduce, DataType::kInt64, step, out);
}

constexpr const char* kArgNotes = "any axis; keepdims; select_last_index";

// Hardmax (opset 13; earlier opsets where the axis is the last dim, the same rows): 1 where an
// element is its axis' first maximum (ArgMax), else 0, as Cast(Equal(ArgMax, positions)).
std::string decompose_hardmax(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank < 1) return "the input must have rank 1 or more";
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", g.opset >= 13 ? -1 : 1), rank);
  if (g.opset < 13 && axis != rank - 1)
    return cat("opset ", g.opset, "'s Hardmax over the flattened dims from axis ", axis,
               " (jetplan takes the last axis before opset 13)");
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const int first = b.add("ArgMax", "first_max", {node.inputs[0]},
                          {{"axis", A::int_attr(axis)}, {"keepdims", A::int_attr(1)}});
  Shape along(static_cast<size_t>(rank), 1);
  along[static_cast<size_t>(axis)] = x[static_cast<size_t>(axis)];
  std::vector<int64_t> positions(static_cast<size_t>(x[static_cast<size_t>(axis)]));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = int64_t(i);
  const int pos = b.constant("positions", DataType::kInt64, along, write_ints(DataType::kInt64, positions));
  const int hit = b.add("Equal", "is_first_max", {pos, first});
  b.add("Cast", "one_hot", {hit}, {{"to", A::int_attr(int64_t(DataType::kFloat32))}}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"ArgMax", check_arg_reduce, "float32 -> int64", kArgNotes},
    {"ArgMin", check_arg_reduce, "float32 -> int64", kArgNotes},
    {"Hardmax", nullptr, "float32",
     "runs as Cast(Equal(ArgMax, positions)); before opset 13 the axis must be the last", 0,
     decompose_hardmax},
};

StepParamsOffset serialize_arg_reduce(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateArgReduceParams(fbb, s.op.arg_kind, s.op.axis, s.op.select_last_index));
}

}  // namespace

const FamilyRules arg_reduce_rules = {serialize_arg_reduce, expand_keepdims_view, rows_of(kRows)};

}  // namespace jetplan::converter::ops
