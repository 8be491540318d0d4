// The GatherElements family: ONNX GatherElements (int32 or int64 indices of the rank of the data).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_gather_elements(Graph& g, Node& node) {
  const Value& data = input(g, node, 0);
  const Value& indices = input(g, node, 1);
  if (std::string r = gather_inputs_reason(data, indices); !r.empty()) return r;
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0 || indices.shape.size() != data.shape.size())
    fail("node ", node_label(node), ": data ", shape_str(data.shape), " and indices ",
         shape_str(indices.shape), " need one rank >= 1");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > data.shape[d])
      fail("node ", node_label(node), ": indices ", shape_str(indices.shape),
           " are larger than data ", shape_str(data.shape), " off the axis");
  check_constant_indices(node, indices, data.shape[axis]);
  node.op.axis = static_cast<int32_t>(axis);
  return resolve_as(g, node, fb::OpFamily::GatherElements, data.dtype, indices.shape);
}

constexpr OpRow kRows[] = {
    {"GatherElements", check_gather_elements, kAnyPlanDtype,
     "indices int32 or int64, the data's rank"},
};

StepParamsOffset serialize_gather_elements(flatbuffers::FlatBufferBuilder& fbb,
                                           const DraftStep& s) {
  return params(fb::CreateGatherElementsParams(fbb, s.op.axis));
}

}  // namespace

const FamilyRules gather_elements_rules = {serialize_gather_elements, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
