// The BatchNorm family: BatchNormalization at inference (fold_batchnorm folds it into a Conv
// where it can).
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_batchnorm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2, 3, 4}); !r.empty()) return r;
  if (std::string r = extra_outputs_unused(g, node, "training"); !r.empty()) return r;
  if (g.opset >= 14 && attr_int(node, "training_mode", 0) != 0)
    return "training_mode=1 (jetplan runs inference only)";
  if (g.opset < 9 && attr_int(node, "spatial", 1) == 0)
    return "spatial=0 (per-element statistics) is not supported";
  const Shape& x = input(g, node, 0).shape;
  if (x.size() < 2)
    fail("node ", node_label(node), ": input ", shape_str(x), " has no channel dim");
  for (size_t i = 1; i <= 4; ++i)
    if (input(g, node, i).shape != Shape{x[1]})
      fail("node ", node_label(node), ": shape mismatch: parameter '", input(g, node, i).name,
           "' is ", shape_str(input(g, node, i).shape), ", expected [", x[1], "]");
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  return resolve_as(g, node, fb::OpFamily::BatchNorm, x);
}

constexpr OpRow kRows[] = {
    {"BatchNormalization", check_batchnorm, "float32",
     "inference only (training_mode=0, no statistics outputs); spatial=1 before opset 9; folded "
     "into the preceding Conv where it can be"},
};

StepParamsOffset serialize_batch_norm(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateBatchNormParams(fbb, s.op.epsilon));
}

}  // namespace

const FamilyRules batch_norm_rules = {serialize_batch_norm, nullptr, rows_of(kRows),
                                      fb::PointwiseInstrKind::Load, NhwcRule::kPerPixel};

}  // namespace jetplan::converter::ops
