// The Pad family: ONNX Pad (constant, reflect, edge and wrap modes).
#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

std::string check_pad(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  fold::PadSpec spec;
  std::string why;
  if (!fold::pad_spec(g, node, x.shape, x.dtype, &spec, &why)) return why;
  bool none = spec.out == x.shape;
  for (int64_t b : spec.begin) none = none && b == 0;
  if (none) return resolve_as_copy(g, node, x.dtype, x.shape);
  node.op.pad.mode = spec.mode;
  node.op.pad.begin = spec.begin;
  node.op.pad.value = spec.value;
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Pad, x.dtype, spec.out);
}

constexpr OpRow kRows[] = {
    {"Pad", check_pad, kAnyPlanDtype,
     "pads (and constant_value, axes) constant; constant, reflect, edge and wrap modes", 19},
};

StepParamsOffset serialize_pad(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const PadDesc& pad = s.op.pad;
  return params(fb::CreatePadParams(fbb, pad.mode, fbb.CreateVector(pad.begin), pad.value));
}

}  // namespace

const FamilyRules pad_rules = {serialize_pad, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
