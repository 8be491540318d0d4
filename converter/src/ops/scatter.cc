// The Scatter family: ONNX ScatterElements (with the deprecated Scatter, its opset 9-10 form)
// and ScatterND: data with updates written, or combined by a reduction, at indices. CPU backend
// and a CUDA kernel (kernels/cuda/scatter.cu, whose selection bounds its walk); folds on
// constants (fold/moves.cc).
#include "converter/src/ops/scatter.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

kernels::ScatterParams scatter_params(const Node& node, bool nd, const Value& data,
                                      const Value& indices, const Value& updates) {
  kernels::ScatterParams p;
  p.nd = nd;
  const std::string r = attr_string(node, "reduction", "none");
  const char* const kNames[] = {"none", "add", "mul", "max", "min"};
  int reduction = 0;
  while (reduction < 5 && r != kNames[reduction]) ++reduction;
  if (reduction == 5) fail("node ", node_label(node), ": unknown reduction '", r, "'");
  p.reduction = static_cast<kernels::ScatterReduction>(reduction);
  switch (data.dtype) {
    case DataType::kFloat16: p.dtype = kernels::DType::kFloat16; break;
    case DataType::kFloat32: p.dtype = kernels::DType::kFloat32; break;
    case DataType::kFloat64: p.dtype = kernels::DType::kFloat64; break;
    case DataType::kInt32: p.dtype = kernels::DType::kInt32; break;
    case DataType::kInt64: p.dtype = kernels::DType::kInt64; break;
    default: p.dtype = kernels::DType::kBool; break;  // moved as bytes only
  }
  if (!kernels::scatter_reduces(p.reduction, p.dtype))
    fail("node ", node_label(node), ": reduction '", r, "' on ", dtype_name(data.dtype),
         " (jetplan reduces float16, float32, float64, int32 and int64)");
  p.elem_bytes = static_cast<int64_t>(dtype_size(data.dtype));
  p.index_dtype = indices.dtype == DataType::kInt32 ? kernels::DType::kInt32 : kernels::DType::kInt64;
  const auto bad_shapes = [&](const char* why) {
    fail("node ", node_label(node), ": ", why, " (data ", shape_str(data.shape), ", indices ",
         shape_str(indices.shape), ", updates ", shape_str(updates.shape), ")");
  };
  const size_t rank = data.shape.size();
  if (rank < 1 || rank > size_t(kernels::kMaxRank) || indices.shape.empty() ||
      indices.shape.size() > size_t(kernels::kMaxRank) ||
      updates.shape.size() > size_t(kernels::kMaxRank))
    bad_shapes("data and indices need ranks of 1 to 8");
  if (!nd) p.axis = static_cast<int32_t>(normalize_axis(node, attr_int(node, "axis", 0), int64_t(rank)));
  if (const char* why = kernels::scatter_shapes(
          &p, int32_t(rank), data.shape.data(), int32_t(indices.shape.size()),
          indices.shape.data(), int32_t(updates.shape.size()), updates.shape.data()))
    bad_shapes(why);
  // A run skips an update whose index is out of range; a constant one is refused here.
  if (indices.is_constant) {
    const std::vector<int64_t> idx = read_ints(indices);
    const size_t k = nd ? size_t(indices.shape.back()) : 1;
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t dim = data.shape[nd ? i % k : size_t(p.axis)];
      if (idx[i] < -dim || idx[i] >= dim)
        fail("node ", node_label(node), ": index ", idx[i], " is out of range for dim ", dim);
    }
  }
  return p;
}

namespace {

// Where each constant index tuple (ScatterND) or index (ScatterElements, full coordinates) lands:
// an element offset of data, in the updates' row-major order. scatter_params checked the range.
std::vector<int64_t> scatter_targets(const kernels::ScatterParams& p, const Value& indices) {
  const std::vector<int64_t> idx = read_ints(indices);
  int64_t strides[kernels::kMaxRank];
  for (int64_t d = p.rank - 1, stride = 1; d >= 0; stride *= p.data_dims[d], --d) strides[d] = stride;
  std::vector<int64_t> targets;
  if (p.nd) {
    const size_t k = size_t(p.index_dims[p.index_rank - 1]);
    for (size_t t = 0; t * k < idx.size(); ++t) {
      int64_t offset = 0;
      for (size_t m = 0; m < k; ++m) {
        const int64_t v = idx[t * k + m];
        offset += (v < 0 ? v + p.data_dims[m] : v) * strides[m];
      }
      targets.push_back(offset);
    }
    return targets;
  }
  for (size_t u = 0; u < idx.size(); ++u) {
    int64_t rest = int64_t(u), offset = 0;
    for (int32_t d = p.index_rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.index_dims[d];
      rest /= p.index_dims[d];
      const int64_t v = idx[u];
      offset += (d == p.axis ? (v < 0 ? v + p.data_dims[d] : v) : c) * strides[d];
    }
    targets.push_back(offset);
  }
  return targets;
}

bool strictly_increasing(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] <= v[i - 1]) return false;
  return true;
}

// Index reads an output element's CUDA thread may make before a constant scatter without a
// reduction is rewritten into sorted form (below); shorter walks run as they are.
constexpr uint64_t kSortFromWalk = 64;

std::string check_scatter(Graph& g, Node& node, bool nd) {
  const Value& data = input(g, node, 0);
  const Value& indices = input(g, node, 1);
  const Value& updates = input(g, node, 2);
  if (std::string r = gather_inputs_reason(data, indices); !r.empty()) return r;
  if (updates.dtype != data.dtype)
    return cat("updates are ", dtype_name(updates.dtype), ", data ", dtype_name(data.dtype));
  const kernels::ScatterParams p = scatter_params(node, nd, data, indices, updates);
  node.op.axis = p.axis;
  node.op.scatter_nd = nd;
  node.op.scatter_reduction = static_cast<fb::ScatterReduction>(p.reduction);
  // Constant tuples naming increasing offsets (as exporters write slice assignments, or as
  // decompose_scatter leaves them): the CUDA kernel binary-searches them.
  node.op.scatter_sorted = nd && indices.is_constant && strictly_increasing(scatter_targets(p, indices));
  return resolve_as(g, node, fb::OpFamily::Scatter, data.dtype, data.shape);
}

// A scatter without a reduction whose indices are constant, where the CUDA kernel would walk
// more than kSortFromWalk index reads an output element (a slice assignment of a detector's head
// exported as ScatterND over every element, a long ScatterElements line) and whose targets are
// not already increasing: only the last update of each target matters, so those are kept,
// ordered by target, and the scatter becomes
//   ScatterND(data, sorted full-depth tuples (constant), Gather(updates as rows, their order))
// whose tuples check_scatter marks sorted. Appends nothing otherwise (the node is checked as it
// is). Exact: the same element lands on each target.
std::string decompose_scatter(Graph& g, const Node& node, std::vector<Node>* out, bool nd) {
  const Value& indices = input(g, node, 1);
  if (!indices.is_constant || attr_string(node, "reduction", "none") != "none") return "";
  const Value& data = input(g, node, 0);
  const Value& updates = input(g, node, 2);
  if (!gather_inputs_reason(data, indices).empty() || updates.dtype != data.dtype) return "";
  kernels::ScatterParams p = scatter_params(node, nd, data, indices, updates);
  if (kernels::scatter_walk_reads(p) <= kSortFromWalk) return "";
  const std::vector<int64_t> targets = scatter_targets(p, indices);
  if (nd && strictly_increasing(targets)) return "";
  // Copies: the constants added below may move the graph's values.
  const Shape data_shape = data.shape, update_shape = updates.shape;
  if (int64_t(targets.size()) > INT32_MAX || shape_count(data_shape) > INT32_MAX)
    return "";  // Int32 tuples and rows would not hold it: left as it is
  const int64_t k = nd ? p.index_dims[p.index_rank - 1] : p.rank;
  int64_t slice = 1;  // elements a tuple names
  for (int64_t d = k; d < p.rank; ++d) slice *= p.data_dims[d];
  // The last writer of each target, by target.
  std::vector<std::pair<int64_t, int64_t>> last;  // (target, update row)
  last.reserve(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) last.emplace_back(targets[t], int64_t(t));
  std::stable_sort(last.begin(), last.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<int64_t> order;
  std::vector<int32_t> tuples;
  for (size_t i = 0; i < last.size(); ++i) {
    if (i + 1 < last.size() && last[i + 1].first == last[i].first) continue;  // a later one wins
    order.push_back(last[i].second);
    int64_t rest = last[i].first / slice;
    const size_t at = tuples.size();
    tuples.resize(at + size_t(k));
    for (int64_t m = k - 1; m >= 0; --m) {
      tuples[at + size_t(m)] = int32_t(rest % p.data_dims[m]);
      rest /= p.data_dims[m];
    }
  }
  OnnxNodes b(g, node, out);
  std::vector<uint8_t> tuple_bytes(tuples.size() * sizeof(int32_t));
  if (!tuples.empty()) std::memcpy(tuple_bytes.data(), tuples.data(), tuple_bytes.size());
  const int64_t kept = int64_t(order.size());
  const int sorted = b.constant("sorted_indices", DataType::kInt32, {kept, k}, std::move(tuple_bytes));
  Shape rows = {int64_t(targets.size())};
  rows.insert(rows.end(), data_shape.begin() + k, data_shape.end());
  int flat = node.inputs[2];
  if (update_shape != rows) flat = b.add("Reshape", "update_rows", {flat, b.ints("rows", rows)});
  const int ordered = b.add("Gather", "ordered_updates", {flat, b.ints("order", order)},
                            {{"axis", OnnxNodes::int_attr(0)}});
  b.add("ScatterND", "sorted", {node.inputs[0], sorted, ordered}, {}, node.outputs[0]);
  return "";
}

std::string decompose_scatter_elements(Graph& g, const Node& node, std::vector<Node>* out) {
  return decompose_scatter(g, node, out, false);
}
std::string decompose_scatter_nd(Graph& g, const Node& node, std::vector<Node>* out) {
  return decompose_scatter(g, node, out, true);
}

// TensorScatter (opset 24, the KV-cache update): past_cache with update written along `axis` at
// positions write_indices[b] + i for batch entry b and i < the update's extent there (mode
// circular: modulo the cache's extent; write_indices left out: zeros). Runs as
//   ScatterElements(past_cache, Expand(positions, update's shape), update, axis)
// with positions = Reshape(write_indices, [B, 1, ...]) + [0 .. i) along axis (int64; a Mod by
// the cache's extent for circular). Linear positions past the cache skip their update (ONNX
// leaves them undefined); negative ones count from the end, as ScatterElements's do. With
// constant write_indices the positions fold and ScatterElements takes its sorted form.
std::string decompose_tensor_scatter(Graph& g, const Node& node, std::vector<Node>* out) {
  // Copies: the constants added below may move the graph's values.
  const Shape cache = input(g, node, 0).shape, update = input(g, node, 1).shape;
  const DataType cache_dtype = input(g, node, 0).dtype, update_dtype = input(g, node, 1).dtype;
  if (std::string r = plan_dtype_reason(input(g, node, 0)); !r.empty()) return r;
  if (update_dtype != cache_dtype)
    return cat("update is ", dtype_name(update_dtype), ", past_cache ", dtype_name(cache_dtype));
  const int64_t rank = int64_t(cache.size());
  if (rank < 2 || rank > kernels::kMaxRank)
    return cat("past_cache must have rank 2 to ", kernels::kMaxRank, " (it is ", shape_str(cache), ")");
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", -2), rank);
  if (axis == 0) return "axis 0 is the batch axis; the sequence axis must follow it";
  const std::string mode = attr_string(node, "mode", "linear");
  if (mode != "linear" && mode != "circular")
    fail("node ", node_label(node), ": mode '", mode, "' (linear or circular)");
  bool fits = int64_t(update.size()) == rank;
  for (int64_t d = 0; fits && d < rank; ++d)
    fits = d == axis ? update[size_t(d)] <= cache[size_t(d)] : update[size_t(d)] == cache[size_t(d)];
  if (!fits)
    fail("node ", node_label(node), ": update ", shape_str(update), " does not fit past_cache ",
         shape_str(cache), " along axis ", axis);
  const int64_t batch = cache[0], extent = update[size_t(axis)];
  if (extent > (int64_t{1} << 26) || batch > (int64_t{1} << 26))
    return cat("an update of ", extent, " positions for ", batch, " batch entries is too large");
  OnnxNodes b(g, node, out);
  int starts = -1;
  if (has_input(node, 2)) {
    const Value& wi = input(g, node, 2);
    if (wi.dtype != DataType::kInt64 || wi.shape != Shape{batch})
      return cat("write_indices must be int64 [", batch, "] (it is ", dtype_name(wi.dtype), " ",
                 shape_str(wi.shape), ")");
    starts = node.inputs[2];
  } else {
    starts = b.ints("write_indices", std::vector<int64_t>(size_t(batch), 0));
  }
  Shape column(size_t(rank), 1), along(size_t(rank), 1);
  column[0] = batch;
  along[size_t(axis)] = extent;
  std::vector<int64_t> offsets(static_cast<size_t>(extent));
  for (int64_t i = 0; i < extent; ++i) offsets[size_t(i)] = i;
  int positions = b.add("Add", "positions",
                        {b.add("Reshape", "starts", {starts, b.ints("starts_shape", column)}),
                         b.constant("offsets", DataType::kInt64, along, write_ints(DataType::kInt64, offsets))});
  if (mode == "circular")
    positions = b.add("Mod", "wrapped",
                      {positions, b.constant("extent", DataType::kInt64, {},
                                             write_ints(DataType::kInt64, {cache[size_t(axis)]}))});
  const int indices = b.add("Expand", "indices", {positions, b.ints("update_shape", update)});
  b.add("ScatterElements", "written", {node.inputs[0], indices, node.inputs[1]},
        {{"axis", OnnxNodes::int_attr(axis)}}, node.outputs[0]);
  return "";
}

std::string check_scatter_elements(Graph& g, Node& node) { return check_scatter(g, node, false); }
std::string check_scatter_nd(Graph& g, Node& node) { return check_scatter(g, node, true); }

constexpr const char* kNotes =
    "indices int32 or int64 (constant ones checked in range); reduction none (any plan dtype), "
    "add, mul, max or min (float16, float32, float64, int32, int64; integers wrap); updates in "
    "row-major order (the last of duplicate indices wins), on the GPU too (each output element "
    "walks its candidate updates: refused there past 2^30 index reads in all); constant indices "
    "without a reduction run as a ScatterND of their last writers sorted by target, which the "
    "GPU binary-searches";

constexpr OpRow kRows[] = {
    {"Scatter", check_scatter_elements, kAnyPlanDtype, "(deprecated) as ScatterElements", 0,
     decompose_scatter_elements},
    {"ScatterElements", check_scatter_elements, kAnyPlanDtype, kNotes, 18,
     decompose_scatter_elements},
    {"ScatterND", check_scatter_nd, kAnyPlanDtype, kNotes, 18, decompose_scatter_nd},
    {"TensorScatter", nullptr, kAnyPlanDtype,
     "write_indices int64 [batch] or left out; linear or circular; runs as a ScatterElements "
     "along axis (not the batch axis) at write_indices + 0, 1, ... (modulo the cache's extent "
     "for circular); linear positions past the cache skip their update",
     24, decompose_tensor_scatter},
};

StepParamsOffset serialize_scatter(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateScatterParams(fbb, s.op.scatter_nd, s.op.axis, s.op.scatter_reduction,
                                             s.op.scatter_sorted));
}

}  // namespace

const FamilyRules scatter_rules = {serialize_scatter, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
