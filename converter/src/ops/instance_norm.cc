// The InstanceNorm family: InstanceNormalization (scale and bias per channel).
#include "converter/src/ir/error.h"
#include "converter/src/ops/normalization.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_instance_norm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  require_channels(node, x);
  expect_shape(g, node, 1, "scale", {x[1]});
  expect_shape(g, node, 2, "bias", {x[1]});
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  return resolve_as(g, node, fb::OpFamily::InstanceNorm, x);
}

constexpr OpRow kRows[] = {
    {"InstanceNormalization", check_instance_norm, "float32", "scale and bias per channel"},
};

StepParamsOffset serialize_instance_norm(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const fb::Activation act = activation(s.op.act);
  return params(fb::CreateInstanceNormParams(fbb, s.op.epsilon, &act));
}

}  // namespace

const FamilyRules instance_norm_rules = {serialize_instance_norm, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
