// The Reduce family: the Reduce* ops (keepdims=0 through a view: keepdims_view.h). Einsum sums
// become Reduce steps too (einsum.h), and LpNormalization a ReduceL1 or ReduceL2 and a Div.
#include <algorithm>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/keepdims_view.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

// Float32, or float64 (the CPU backend's Reduce computes it in double throughout).
std::string check_reduce(Graph& g, Node& node) {
  const DataType dtype = input(g, node, 0).dtype;
  if (dtype != DataType::kFloat64)
    if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  fold::ReduceSpec spec;
  std::string why;
  if (!fold::reduce_spec(g, node, x, &spec, &why)) return why;
  node.inputs.resize(1);
  if (spec.identity) {
    node.op.family = fb::OpFamily::Copy;  // ONNX: the input unchanged
    node.op.removable = true;
    set_output_typed(g, node, 0, dtype, x);
    return "";
  }
  node.op.reduce.op = spec.op;
  node.op.reduce.axes = spec.axes;
  return resolve_reduced(g, node, fb::OpFamily::Reduce, dtype, spec.kept, spec.out);
}

constexpr const char* kReduceDtypes = "float32, float64";
constexpr const char* kReduceNotes =
    "axes constant (attribute, or input since opset 13 for ReduceSum and 18 for the others); "
    "keepdims 0 or 1; "
    "noop_with_empty_axes";

// LpNormalization (opset 1): x / ||x||_p along the axis (p 1 or 2), as x / ReduceL<p>(x) with
// kept dims, and 0 where the norm is 0 (ONNX's reference: not 0 / 0).
std::string decompose_lp_normalization(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const int64_t p = attr_int(node, "p", 2);
  if (p != 1 && p != 2) return cat("p ", p, " (ONNX defines 1 and 2)");
  const int64_t rank = static_cast<int64_t>(input(g, node, 0).shape.size());
  if (rank < 1) return "the input must have rank 1 or more";
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", -1), rank);
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const std::string reduce = p == 1 ? "ReduceL1" : "ReduceL2";
  // The reduction as the model's opset spells it: axes an input from opset 18, else an attribute.
  const int norm = g.opset >= 18
                       ? b.add(reduce, "norm", {node.inputs[0], b.ints("axes", {axis})},
                               {{"keepdims", A::int_attr(1)}})
                       : b.add(reduce, "norm", {node.inputs[0]},
                               {{"axes", A::ints_attr({axis})}, {"keepdims", A::int_attr(1)}});
  const int zero = b.scalar("zero", 0.f);
  b.add("Where", "normalized",
        {b.add("Equal", "zero_norm", {norm, zero}), zero, b.add("Div", "divided", {node.inputs[0], norm})},
        {}, node.outputs[0]);
  return "";
}

// MeanVarianceNormalization (opsets 9 and 13): (x - mean) / sqrt(mean((x - mean)^2)) over
// `axes` (default 0, 2, 3), as ONNX's function body computes it (no epsilon: a constant slice
// gives NaN, there as here).
std::string decompose_mvn(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const int64_t rank = static_cast<int64_t>(input(g, node, 0).shape.size());
  std::vector<int64_t> axes;
  for (int64_t a : attr_ints(node, "axes", {0, 2, 3})) axes.push_back(normalize_axis(node, a, rank));
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const auto mean = [&](const char* what, int x) {  // axes an input from opset 18
    return g.opset >= 18 ? b.add("ReduceMean", what, {x, b.ints(cat(what, "_axes"), axes)},
                                 {{"keepdims", A::int_attr(1)}})
                         : b.add("ReduceMean", what, {x},
                                 {{"axes", A::ints_attr(axes)}, {"keepdims", A::int_attr(1)}});
  };
  const int centred = b.add("Sub", "centred", {node.inputs[0], mean("mean", node.inputs[0])});
  const int variance = mean("variance", b.add("Mul", "squared", {centred, centred}));
  b.add("Div", "normalized", {centred, b.add("Sqrt", "deviation", {variance})}, {},
        node.outputs[0]);
  return "";
}

// The definitions of opset 18 (axes an input); ReduceLogSum and ReduceLogSumExp of opset 28
// spell out the result of an empty reduction, which jetplan never computes (check.cc refuses a
// step that reads an empty tensor and writes a non-empty one).
constexpr OpRow kRows[] = {
    {"MeanVarianceNormalization", nullptr, "float32",
     "runs as (x - ReduceMean(x)) / Sqrt(ReduceMean((x - mean)^2)) over axes", 0, decompose_mvn},
    {"LpNormalization", nullptr, "float32", "p 1 or 2; runs as x / ReduceL<p>(x) along the axis (0 where the norm is 0)", 0,
     decompose_lp_normalization},
    {"ReduceL1", check_reduce, kReduceDtypes, kReduceNotes, 18},
    {"ReduceL2", check_reduce, kReduceDtypes, kReduceNotes, 18},
    {"ReduceLogSum", check_reduce, kReduceDtypes, kReduceNotes, 28},
    {"ReduceLogSumExp", check_reduce, kReduceDtypes, kReduceNotes, 28},
    {"ReduceMax", check_reduce, kReduceDtypes, kReduceNotes, 18},
    {"ReduceMean", check_reduce, kReduceDtypes, kReduceNotes, 18},
    {"ReduceMin", check_reduce, kReduceDtypes, kReduceNotes, 18},
    {"ReduceProd", check_reduce, kReduceDtypes, kReduceNotes, 18},
    {"ReduceSum", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceSumSquare", check_reduce, kReduceDtypes, kReduceNotes, 18},
};

StepParamsOffset serialize_reduce(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateReduceParamsDirect(fbb, s.op.reduce.op, &s.op.reduce.axes));
}

}  // namespace

const FamilyRules reduce_rules = {serialize_reduce, expand_keepdims_view, rows_of(kRows)};

}  // namespace jetplan::converter::ops
