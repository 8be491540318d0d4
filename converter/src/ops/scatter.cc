// The Scatter family: ONNX ScatterElements (with the deprecated Scatter, its opset 9-10 form)
// and ScatterND: data with updates written, or combined by a reduction, at indices. CPU backend
// and a CUDA kernel (kernels/cuda/scatter.cu, whose selection bounds its walk); folds on
// constants (fold/moves.cc).
#include "converter/src/ops/scatter.h"

#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
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
  return resolve_as(g, node, fb::OpFamily::Scatter, data.dtype, data.shape);
}

std::string check_scatter_elements(Graph& g, Node& node) { return check_scatter(g, node, false); }
std::string check_scatter_nd(Graph& g, Node& node) { return check_scatter(g, node, true); }

constexpr const char* kNotes =
    "indices int32 or int64 (constant ones checked in range); reduction none (any plan dtype), "
    "add, mul, max or min (float16, float32, float64, int32, int64; integers wrap); updates in "
    "row-major order (the last of duplicate indices wins), on the GPU too (each output element "
    "walks its candidate updates: refused there past 2^30 index reads in all)";

constexpr OpRow kRows[] = {
    {"Scatter", check_scatter_elements, kAnyPlanDtype, "(deprecated) as ScatterElements"},
    {"ScatterElements", check_scatter_elements, kAnyPlanDtype, kNotes, 18},
    {"ScatterND", check_scatter_nd, kAnyPlanDtype, kNotes, 18},
};

StepParamsOffset serialize_scatter(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreateScatterParams(fbb, s.op.scatter_nd, s.op.axis, s.op.scatter_reduction));
}

}  // namespace

const FamilyRules scatter_rules = {serialize_scatter, nullptr, rows_of(kRows)};

}  // namespace jetplan::converter::ops
