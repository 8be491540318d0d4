// The Gather family: ONNX Gather (int32 or int64 indices), and Compress with a constant
// condition (a Gather of the kept positions).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
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

// Compress (opset 11) with a constant condition: a Gather of the positions where it is true
// along the axis (of the flattened input without one); past the condition's end nothing is kept.
std::string decompose_compress(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = plan_dtype_input(g, node, 0); !r.empty()) return r;
  const Value& cond = input(g, node, 1);
  if (!cond.is_constant) return run_time_reason("condition");
  if (cond.dtype != DataType::kBool || cond.shape.size() != 1)
    return cat("the condition must be a 1-D bool (it is ", dtype_name(cond.dtype), " ",
               shape_str(cond.shape), ")");
  const Shape x = input(g, node, 0).shape;
  const bool flat = !has_attr(node, "axis");
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = flat ? 0 : normalize_axis(node, attr_int(node, "axis", 0), rank);
  const int64_t len = flat ? shape_count(x) : x[static_cast<size_t>(axis)];
  if (int64_t(cond.data.size()) > len)
    fail("node ", node_label(node), ": the condition has ", cond.data.size(),
         " entries for an axis of ", len);
  std::vector<int64_t> kept;
  for (size_t i = 0; i < cond.data.size(); ++i)
    if (cond.data[i] != 0) kept.push_back(int64_t(i));
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  int data = node.inputs[0];
  if (flat) data = b.add("Reshape", "flat", {data, b.ints("flat_shape", {len})});
  b.add("Gather", "kept", {data, b.ints("positions", kept)}, {{"axis", A::int_attr(axis)}},
        node.outputs[0]);
  return "";
}

// ReverseSequence (opset 10) with constant sequence_lens: time and batch are dims 0 and 1 (in
// either order), so x viewed as [d0 * d1, rest] is one Gather of rows, each (time t, batch b)
// reading time lens[b] - 1 - t below lens[b] and itself from there on.
std::string decompose_reverse_sequence(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = plan_dtype_input(g, node, 0); !r.empty()) return r;
  const Value& lens_value = input(g, node, 1);
  if (!lens_value.is_constant) return run_time_reason("sequence_lens");
  const Shape x = input(g, node, 0).shape;
  const std::vector<int64_t> lens = read_ints(lens_value);
  const int64_t time_axis = attr_int(node, "time_axis", 0), batch_axis = attr_int(node, "batch_axis", 1);
  if (x.size() < 2) return cat("the input must have rank 2 or more (", shape_str(x), ")");
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    fail("node ", node_label(node), ": time_axis and batch_axis must be 0 and 1 (they are ",
         time_axis, " and ", batch_axis, ")");
  const int64_t steps = x[size_t(time_axis)], batch = x[size_t(batch_axis)];
  if (int64_t(lens.size()) != batch)
    fail("node ", node_label(node), ": sequence_lens has ", lens.size(), " entries for a batch of ",
         batch);
  for (const int64_t n : lens)
    if (n < 0 || n > steps)
      fail("node ", node_label(node), ": a sequence length of ", n, " for a time axis of ", steps);
  const int64_t d1 = x[1];
  std::vector<int64_t> rows(size_t(x[0] * d1));
  for (int64_t i = 0; i < int64_t(rows.size()); ++i) {
    const int64_t t = time_axis == 0 ? i / d1 : i % d1, b = time_axis == 0 ? i % d1 : i / d1;
    const int64_t from = t < lens[size_t(b)] ? lens[size_t(b)] - 1 - t : t;
    rows[size_t(i)] = time_axis == 0 ? from * d1 + b : b * d1 + from;
  }
  Shape flat = {x[0] * d1};
  flat.insert(flat.end(), x.begin() + 2, x.end());
  OnnxNodes b(g, node, out);
  const int viewed = b.add("Reshape", "rows", {node.inputs[0], b.ints("rows_shape", flat)});
  const int gathered = b.add("Gather", "reversed", {viewed, b.ints("sources", rows)},
                             {{"axis", OnnxNodes::int_attr(0)}});
  b.add("Reshape", "shaped", {gathered, b.ints("shape", x)}, {}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"ReverseSequence", nullptr, kAnyPlanDtype,
     "sequence_lens constant; runs as a Gather of the (time, batch) rows", 0,
     decompose_reverse_sequence},
    {"Compress", nullptr, kAnyPlanDtype,
     "condition constant; runs as a Gather of the kept positions", 0, decompose_compress},
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
