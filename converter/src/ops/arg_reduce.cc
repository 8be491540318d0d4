// The ArgReduce family: ArgMax and ArgMin (keepdims=0 through a view: keepdims_view.h).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
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

constexpr OpRow kRows[] = {
    {"ArgMax", check_arg_reduce, "float32 -> int64", kArgNotes},
    {"ArgMin", check_arg_reduce, "float32 -> int64", kArgNotes},
};

StepParamsOffset serialize_arg_reduce(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateArgReduceParams(fbb, s.op.arg_kind, s.op.axis, s.op.select_last_index));
}

}  // namespace

const FamilyRules arg_reduce_rules = {serialize_arg_reduce, expand_keepdims_view, rows_of(kRows)};

}  // namespace jetplan::converter::ops
