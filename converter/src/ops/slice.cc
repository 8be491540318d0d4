// The Slice family: Slice, and Split (one Slice step per output).
#include <string>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"

namespace jetplan::converter::ops {

namespace {

std::string check_slice(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  fold::SliceSpec spec;
  std::string why;
  if (!fold::slice_spec(g, node, x.shape, &spec, &why)) return why;
  bool whole = spec.out == x.shape;
  for (int64_t s : spec.steps) whole = whole && s == 1;
  if (whole) return resolve_as_copy(g, node, x.dtype, x.shape);
  node.op.slice.starts = spec.starts;
  node.op.slice.steps = spec.steps;
  node.inputs.resize(1);
  return resolve_as(g, node, fb::OpFamily::Slice, x.dtype, spec.out);
}

std::string check_split(Graph& g, Node& node) {
  PlanInput x;
  if (std::string r = plan_input(g, node, &x); !r.empty()) return r;
  fold::SplitSpec spec;
  std::string why;
  if (!fold::split_spec(g, node, x.shape, &spec, &why)) return why;
  const std::vector<fold::SliceSpec> slices = fold::split_slices(x.shape, spec);
  node.inputs.resize(1);
  if (slices.size() == 1) return resolve_as_copy(g, node, x.dtype, x.shape);
  node.op.family = fb::OpFamily::Slice;
  node.op.expand = Expansion::kSplit;
  node.op.axis = static_cast<int32_t>(spec.axis);
  node.op.slice.split = spec.sizes;
  for (size_t i = 0; i < slices.size(); ++i)
    if (node.outputs[i] >= 0) set_output_typed(g, node, i, x.dtype, slices[i].out);
  return "";
}

// Split: one Slice per output.
bool expand_split(Graph& g, Node& node, std::vector<Node>* out) {
  if (node.op.expand != Expansion::kSplit) return false;
  node.op.expand = Expansion::kNone;
  StepWriter w(g, out);
  const int x = node.inputs[0];
  const std::vector<fold::SliceSpec> slices =
      fold::split_slices(w.value(x).shape, fold::SplitSpec{node.op.axis, node.op.slice.split});
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0) continue;
    Node n = StepWriter::step(node.name + ":" + std::to_string(i), fb::OpFamily::Slice, {x},
                              node.outputs[i]);
    n.op.slice.starts = slices[i].starts;
    n.op.slice.steps = slices[i].steps;
    w.add(std::move(n));
  }
  return true;
}

constexpr OpRow kRows[] = {
    {"Slice", check_slice, kAnyPlanDtype,
     "starts, ends, axes and steps constant (after folding); any step sign"},
    {"Split", check_split, kAnyPlanDtype,
     "split constant (input or attribute); empty outputs are not computed", 18},
};

StepParamsOffset serialize_slice(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateSliceParams(fbb, fbb.CreateVector(s.op.slice.starts),
                                      fbb.CreateVector(s.op.slice.steps)));
}

}  // namespace

const FamilyRules slice_rules = {serialize_slice, expand_split, rows_of(kRows)};

}  // namespace jetplan::converter::ops
