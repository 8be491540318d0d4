// The Slice family: Slice, Split (one Slice step per output), and CenterCropPad (a Slice and a
// Pad).
#include <algorithm>
#include <string>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
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

// CenterCropPad (opset 18) with a constant shape: a Slice of the centred window of the dims it
// shrinks, then a zero Pad around the dims it grows (the odd element goes to the end in both).
std::string decompose_center_crop_pad(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = plan_dtype_input(g, node, 0); !r.empty()) return r;
  const Value& shape = input(g, node, 1);
  if (!shape.is_constant) return run_time_reason("shape");
  const Shape x = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes = attr_ints(node, "axes", {});
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  const std::vector<int64_t> sizes = read_ints(shape);
  if (sizes.size() != axes.size())
    fail("node ", node_label(node), ": shape has ", sizes.size(), " entries for ", axes.size(), " axes");
  std::vector<int64_t> starts, ends, slice_axes, pads(static_cast<size_t>(2 * rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(node, axes[i], rank), dim = x[size_t(a)], want = sizes[i];
    if (want < 0) fail("node ", node_label(node), ": target extent ", want, " is negative");
    if (want < dim) {
      starts.push_back((dim - want) / 2);
      ends.push_back((dim - want) / 2 + want);
      slice_axes.push_back(a);
    } else if (want > dim) {
      pads[size_t(a)] = (want - dim) / 2;
      pads[size_t(a + rank)] = want - dim - (want - dim) / 2;
    }
  }
  OnnxNodes b(g, node, out);
  const bool pad = std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v != 0; });
  int y = node.inputs[0];
  if (!slice_axes.empty())
    y = b.add("Slice", "crop", {y, b.ints("starts", starts), b.ints("ends", ends), b.ints("axes", slice_axes)},
              {}, pad ? -1 : node.outputs[0]);
  if (pad) b.add("Pad", "pad", {y, b.ints("pads", pads)}, {}, node.outputs[0]);
  if (slice_axes.empty() && !pad) b.add("Identity", "same", {y}, {}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"CenterCropPad", nullptr, kAnyPlanDtype,
     "shape constant; runs as a Slice of the centre and a zero Pad", 18, decompose_center_crop_pad},
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
