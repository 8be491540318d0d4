// The Gather family: ONNX Gather (int32 or int64 indices), Compress with a constant condition
// (a Gather of the kept positions), ReverseSequence, and GatherND (a Gather of a flattened view).
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

// GatherND (opsets 11 to 13): data [b batch dims, k indexed dims, tail] viewed as
// [B * K, tail] (B, K the products of the batch and indexed extents); each index tuple of
// indices [b batch dims, ..., k] becomes the row batch * K + sum_j (i_j mod d_j) * stride_j,
// in Slice, Mod, Mul and Add steps on the index columns (folded when the indices are constant),
// and one Gather of those rows. Mod with a positive divisor maps a negative index -d..-1 to
// d-1..0 as ONNX asks; constant indices outside [-d, d) are refused, run-time ones wrap.
std::string decompose_gather_nd(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = plan_dtype_input(g, node, 0); !r.empty()) return r;
  const Value& idx = input(g, node, 1);
  if (idx.dtype != DataType::kInt64)
    return cat("indices must be int64 (they are ", dtype_name(idx.dtype), ")");
  const Shape x = input(g, node, 0).shape, q = idx.shape;
  const int64_t b = attr_int(node, "batch_dims", 0);
  const int64_t r = int64_t(x.size()), qr = int64_t(q.size());
  if (qr < 1 || r < 1) return "data and indices must have rank 1 or more";
  const int64_t k = q.back();
  if (b < 0 || b >= std::min(r, qr) || k < 1 || b + k > r)
    fail("node ", node_label(node), ": batch_dims ", b, " and index tuples of ", k,
         " do not fit data ", shape_str(x), " and indices ", shape_str(q));
  for (int64_t d = 0; d < b; ++d)
    if (x[size_t(d)] != q[size_t(d)])
      fail("node ", node_label(node), ": the batch dims of data ", shape_str(x),
           " and indices ", shape_str(q), " differ");
  int64_t batch = 1, rows = 1;
  for (int64_t d = 0; d < b; ++d) batch *= x[size_t(d)];
  for (int64_t j = 0; j < k; ++j) rows *= x[size_t(b + j)];
  if (idx.is_constant) {
    const std::vector<int64_t> v = read_ints(idx);
    for (size_t i = 0; i < v.size(); ++i) {
      const int64_t d = x[size_t(b) + i % size_t(k)];
      if (v[i] < -d || v[i] >= d)
        fail("node ", node_label(node), ": index ", v[i], " is out of range for a dim of ", d);
    }
  }
  OnnxNodes nodes(g, node, out);
  using A = OnnxNodes;
  Shape view = {batch * rows};
  view.insert(view.end(), x.begin() + b + k, x.end());
  const int data = nodes.add("Reshape", "rows", {node.inputs[0], nodes.ints("rows_shape", view)});
  int row = -1;
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    const int64_t d = x[size_t(b + j)];
    const int col = nodes.add("Slice", cat("column", j),
                              {node.inputs[1], nodes.ints(cat("from", j), {j}),
                               nodes.ints(cat("to", j), {j + 1}), nodes.ints(cat("axis", j), {-1})});
    int term = nodes.add("Mod", cat("wrapped", j), {col, nodes.ints(cat("dim", j), {d})});
    if (stride != 1) term = nodes.add("Mul", cat("scaled", j), {term, nodes.ints(cat("stride", j), {stride})});
    row = row < 0 ? term : nodes.add("Add", cat("sum", j), {row, term});
    stride *= d;
  }
  if (b > 0) {  // the batch's first row: batch index * K, broadcast over the index dims
    Shape offsets_shape(q.begin(), q.begin() + b);
    offsets_shape.resize(size_t(qr), 1);
    std::vector<int64_t> offsets(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) offsets[size_t(i)] = i * rows;
    const int o = nodes.constant("batch_rows", DataType::kInt64, offsets_shape,
                                 write_ints(DataType::kInt64, offsets));
    row = nodes.add("Add", "batched", {row, o});
  }
  const Shape tuples(q.begin(), q.end() - 1);
  row = nodes.add("Reshape", "tuples", {row, nodes.ints("tuples_shape", tuples)});
  nodes.add("Gather", "gathered", {data, row}, {{"axis", A::int_attr(0)}}, node.outputs[0]);
  return "";
}

constexpr OpRow kRows[] = {
    {"GatherND", nullptr, kAnyPlanDtype,
     "indices int64; batch_dims; runs as Mod, Mul and Add steps on the index columns (folded "
     "when constant) and a Gather of a flattened view (run-time indices out of range wrap)", 0,
     decompose_gather_nd},
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
