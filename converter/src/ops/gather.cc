// The Gather family: ONNX Gather (int32 or int64 indices).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_gather(Graph& g, Node& node) {
  const Value& data = input(g, node, 0);
  const Value& indices = input(g, node, 1);
  if (std::string r = gather_inputs_reason(data, indices); !r.empty()) return r;
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) fail("node ", node_label(node), ": Gather on a scalar");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  check_constant_indices(node, indices, data.shape[axis]);
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), indices.shape.begin(), indices.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  node.op.axis = static_cast<int32_t>(axis);
  return resolve_as(g, node, fb::OpFamily::Gather, data.dtype, out);
}

constexpr OpRow kRows[] = {
    {"Gather", check_gather, kAnyPlanDtype,
     "indices int32 or int64 (constant ones are range-checked; out of range at "
     "run time gives zeros)"},
};

StepParamsOffset serialize_gather(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateGatherParams(fbb, s.op.axis));
}

}  // namespace

const FamilyRules gather_rules = {serialize_gather, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
