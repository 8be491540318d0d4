// The Lrn family: LRN across channels.
#include "converter/src/ir/error.h"
#include "converter/src/ops/normalization.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_lrn(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  require_channels(node, x);
  if (!has_attr(node, "size")) fail("node ", node_label(node), ": the size attribute is missing");
  LrnDesc& lrn = node.op.lrn;
  lrn.size = attr_int(node, "size", 1);
  if (lrn.size < 1 || lrn.size > kMaxWindow)
    fail("node ", node_label(node), ": size ", lrn.size, " is outside [1, 2^31]");
  lrn.alpha = attr_float(node, "alpha", 1e-4f);
  lrn.beta = attr_float(node, "beta", 0.75f);
  lrn.bias = attr_float(node, "bias", 1.f);
  return resolve_as(g, node, fb::OpFamily::Lrn, x);
}

constexpr OpRow kRows[] = {
    {"LRN", check_lrn, "float32", "across channels, any size"},
};

StepParamsOffset serialize_lrn(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const LrnDesc& lrn = s.op.lrn;
  return params(fb::CreateLrnParams(fbb, lrn.size, lrn.alpha, lrn.beta, lrn.bias));
}

}  // namespace

const FamilyRules lrn_rules = {serialize_lrn, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
