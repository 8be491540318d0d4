// The GroupNorm family: GroupNormalization (opset 18: scale and bias per group; 21: per channel).
#include "converter/src/ir/error.h"
#include "converter/src/ops/normalization.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_group_norm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  if (std::string r = check_stash_type(node); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  require_channels(node, x);
  if (!has_attr(node, "num_groups"))
    fail("node ", node_label(node), ": the num_groups attribute is missing");
  const int64_t groups = attr_int(node, "num_groups", 1);
  if (groups < 1 || x[1] % groups != 0)
    fail("node ", node_label(node), ": num_groups ", groups, " does not divide the ", x[1],
         " channels of ", shape_str(x));
  // Opset 18 scales each group; opset 21 each channel.
  const bool per_group = g.opset < 21;
  const Shape param = {per_group ? groups : x[1]};
  expect_shape(g, node, 1, "scale", param);
  expect_shape(g, node, 2, "bias", param);
  node.op.groups = groups;
  node.op.affine_per_group = per_group;
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  return resolve_as(g, node, fb::OpFamily::GroupNorm, x);
}

constexpr OpRow kRows[] = {
    {"GroupNormalization", check_group_norm, "float32",
     "scale and bias per group (opset 18 to 20) or per channel (opset 21 on); stash_type 1", 21},
};

StepParamsOffset serialize_group_norm(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  const fb::Activation act = activation(op.act);
  return params(fb::CreateGroupNormParams(fbb, op.groups, op.epsilon, op.affine_per_group, &act));
}

}  // namespace

const FamilyRules group_norm_rules = {serialize_group_norm, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
