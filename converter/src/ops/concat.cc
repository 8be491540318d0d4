// The Concat family: ONNX Concat, which moves bytes (any plan dtype).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_concat(Graph& g, Node& node) {
  const size_t n = node.inputs.size();
  if (n < 1 || n > 64) return cat(n, " inputs (jetplan concatenates 1 to 64)");
  // Concat moves bytes: any plan dtype, the same for every input.
  for (size_t i = 0; i < n; ++i) {
    if (std::string r = plan_dtype_input(g, node, i); !r.empty()) return r;
    if (input(g, node, i).dtype != input(g, node, 0).dtype)
      return cat("inputs differ in dtype (", dtype_name(input(g, node, 0).dtype), " and ",
                 dtype_name(input(g, node, i).dtype), ")");
  }
  if (!has_attr(node, "axis")) fail("node ", node_label(node), ": the axis attribute is missing");
  const Shape& first = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) fail("node ", node_label(node), ": Concat of scalars");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  Shape out = first;
  out[axis] = 0;
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = input(g, node, i).shape;
    bool same = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; same && d < rank; ++d) same = d == axis || s[d] == first[d];
    if (!same)
      fail("node ", node_label(node), ": shape mismatch: cannot concatenate ", shape_str(first),
           " and ", shape_str(s), " on axis ", axis);
    out[axis] += s[axis];
  }
  node.op.axis = static_cast<int32_t>(axis);
  return resolve_as(g, node, fb::OpFamily::Concat, input(g, node, 0).dtype, out);
}

constexpr OpRow kRows[] = {
    {"Concat", check_concat, "any plan dtype", "1 to 64 inputs of one dtype"},
};

StepParamsOffset serialize_concat(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateConcatParams(fbb, s.op.axis));
}

}  // namespace

const FamilyRules concat_rules = {serialize_concat, nullptr, rows_of(kRows),
                                  fb::PointwiseInstrKind::Load, NhwcRule::kConcat};

}  // namespace jetplan::converter::ops
