// The Pool family: MaxPool, AveragePool (their window: window.h), the global pools, and LpPool
// and GlobalLpPool (run as an average or a sum of |x|^p).
#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"
#include "converter/src/ops/window.h"

namespace jetplan::converter::ops {

namespace {

// MaxPool of int8 and uint8 runs in float32 between two Casts (exact: every such value is a
// float, and the max is one of them). MaxPool's Indices output, where used, is the step's second
// output (int64, CPU backend).
std::string check_pool(Graph& g, Node& node) {
  const bool is_max = node.op_type == "MaxPool";
  const DataType dtype = input(g, node, 0).dtype;
  const bool bytes = is_max && (dtype == DataType::kInt8 || dtype == DataType::kUInt8);
  if (!bytes)
    if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  bool with_indices = false;
  if (is_max) {
    with_indices = node.outputs.size() > 1 && node.outputs[1] >= 0 &&
                   !extra_outputs_unused(g, node, "Indices").empty();
    // storage_order only orders the Indices output (column-major offsets within a plane).
    const int64_t order = attr_int(node, "storage_order", 0);
    if (order != 0 && order != 1)
      fail("node ", node_label(node), ": storage_order ", order, " is neither 0 nor 1");
    node.op.pool_indices_column_major = with_indices && order == 1;
  }
  const Shape& x = input(g, node, 0).shape;
  if (std::string r = spatial_rank_reason(x); !r.empty()) return r;
  OpDesc& op = node.op;
  if (!has_attr(node, "kernel_shape"))
    fail("node ", node_label(node), ": the kernel_shape attribute is missing");
  op.kernel = attr_ints(node, "kernel_shape", {});
  resolve_window(node, x, WindowRules{}, &op);
  op.pool_kind = is_max ? fb::PoolKind::Max : fb::PoolKind::Average;
  op.count_include_pad = !is_max && attr_int(node, "count_include_pad", 0) != 0;
  Shape out = window_output(node, x, x[1], op);
  op.ceil_mode = attr_int(node, "ceil_mode", 0) != 0;
  if (op.ceil_mode) {
    // Rounding up adds a partial last window wherever the windows do not tile the padded
    // input. A window that would start inside the end padding is dropped (PyTorch, and the
    // ONNX spec since); ONNX 1.12's shape inference keeps it, so where the two differ the
    // output shape is ambiguous and the node is refused.
    for (size_t i = 0; i + 2 < x.size(); ++i) {
      const int64_t span =
          x[i + 2] + op.pad_begin[i] + op.pad_end[i] - op.dilation[i] * (op.kernel[i] - 1) - 1;
      const int64_t ceil_out = (span + op.stride[i] - 1) / op.stride[i] + 1;
      if ((ceil_out - 1) * op.stride[i] >= x[i + 2] + op.pad_begin[i])
        return cat("ceil_mode=1 here starts the last window of spatial dim ", i,
                   " inside the end padding (ONNX versions disagree on whether that window "
                   "exists)");
      out[i + 2] = ceil_out;
    }
  }
  op.family = fb::OpFamily::Pool;
  if (bytes) {
    op.expand = Expansion::kPromote;
    op.compute_dtype = static_cast<int32_t>(DataType::kFloat32);
  }
  set_output_typed(g, node, 0, dtype, out);
  if (with_indices)
    set_output_typed(g, node, 1, DataType::kInt64, out);
  else
    node.outputs.resize(1);
  return "";
}

std::string check_global_pool(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (std::string r = spatial_rank_reason(x); !r.empty()) return r;
  OpDesc& op = node.op;
  const size_t spatial = x.size() - 2;
  op.kernel.assign(x.begin() + 2, x.end());
  op.stride.assign(spatial, 1);
  op.dilation.assign(spatial, 1);
  op.pad_begin.assign(spatial, 0);
  op.pad_end.assign(spatial, 0);
  op.pool_kind = node.op_type == "GlobalMaxPool" ? fb::PoolKind::Max : fb::PoolKind::Average;
  Shape out = {x[0], x[1]};
  out.resize(x.size(), 1);
  return resolve_as(g, node, fb::OpFamily::Pool, out);
}

// LpPool (opsets 2 to 22) and GlobalLpPool: (sum over the window of |x|^p)^(1/p), the padding
// adding nothing. The sum is an AveragePool of |x|^p that counts the pads (so its divisor is the
// window's size everywhere) times that size; the global form a ReduceSum over the spatial dims.
// p 1 is Abs, p 2 x * x and Sqrt, others Pow. ceil_mode is refused: a window running past the
// padding would divide by less than its size.
std::string decompose_lp_pool(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const bool global = node.op_type == "GlobalLpPool";
  const int64_t p = attr_int(node, "p", 2);
  if (p < 1) return cat("p ", p, " (jetplan takes 1 or more)");
  const int64_t rank = static_cast<int64_t>(input(g, node, 0).shape.size());
  if (rank < 3 || rank > 5) return cat("input rank ", rank, " (1 to 3 spatial dims: rank 3 to 5)");
  if (attr_int(node, "ceil_mode", 0) != 0) return "ceil_mode 1";
  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const int x = node.inputs[0];
  int powered = p == 2 ? b.add("Mul", "squared", {x, x}) : b.add("Abs", "magnitude", {x});
  if (p > 2) powered = b.add("Pow", "powered", {powered, b.scalar("p", float(p))});
  int sum = -1;
  if (global) {
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
    // The reduction as the model's opset spells it: axes an input from opset 13.
    sum = g.opset >= 13
              ? b.add("ReduceSum", "sum", {powered, b.ints("axes", axes)}, {{"keepdims", A::int_attr(1)}})
              : b.add("ReduceSum", "sum", {powered},
                      {{"axes", A::ints_attr(axes)}, {"keepdims", A::int_attr(1)}});
  } else {
    if (!has_attr(node, "kernel_shape"))
      fail("node ", node_label(node), ": the kernel_shape attribute is missing");
    std::map<std::string, Attribute> attrs;
    for (const char* name : {"kernel_shape", "strides", "pads", "auto_pad", "dilations"})
      if (has_attr(node, name)) attrs[name] = node.attrs.at(name);
    attrs["count_include_pad"] = A::int_attr(1);
    int64_t window = 1;
    for (int64_t k : attr_ints(node, "kernel_shape", {})) window *= k;
    const int mean = b.add("AveragePool", "window_mean", {powered}, attrs);
    sum = b.add("Mul", "window_sum", {mean, b.scalar("window", float(window))});
  }
  if (p == 1) b.add("Identity", "norm", {sum}, {}, node.outputs[0]);
  else if (p == 2) b.add("Sqrt", "norm", {sum}, {}, node.outputs[0]);
  else b.add("Pow", "norm", {sum, b.scalar("inverse_p", 1.f / float(p))}, {}, node.outputs[0]);
  return "";
}

constexpr const char* kPoolNotes =
    "1 to 3 spatial dims; ceil_mode=1 only where no window starts inside the end padding";

// AveragePool of opset 19 adds dilations, which the window (window.cc) reads for every pool.
constexpr OpRow kRows[] = {
    {"AveragePool", check_pool, "float32", kPoolNotes, 19},
    {"GlobalAveragePool", check_global_pool, "float32", "1 to 3 spatial dims"},
    {"GlobalMaxPool", check_global_pool, "float32", "1 to 3 spatial dims"},
    {"LpPool", nullptr, "float32",
     "1 to 3 spatial dims; p 1 or more; ceil_mode 0; runs as an AveragePool of |x|^p counting "
     "the pads, times the window size, to the power 1/p", 18, decompose_lp_pool},
    {"GlobalLpPool", nullptr, "float32",
     "1 to 3 spatial dims; p 1 or more; runs as a ReduceSum of |x|^p to the power 1/p", 0,
     decompose_lp_pool},
    {"MaxPool", check_pool, "float32; int8, uint8 (in float32)",
     "1 to 3 spatial dims; the Indices output (storage_order 0 or 1) on the CPU backend only; "
     "ceil_mode=1 only where no window starts inside the end padding"},
};

StepParamsOffset serialize_pool(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const OpDesc& op = s.op;
  auto p =
      fb::CreatePoolParams(fbb, op.pool_kind, ints(fbb, op.kernel), ints(fbb, op.stride),
                           ints(fbb, op.dilation), ints(fbb, op.pad_begin), ints(fbb, op.pad_end),
                           op.count_include_pad, op.ceil_mode, op.pool_indices_column_major);
  return params(p);
}

}  // namespace

const FamilyRules pool_rules = {serialize_pool, expand_promoted, rows_of(kRows),
                                fb::PointwiseInstrKind::Load, NhwcRule::kPerPixel};

}  // namespace jetplan::converter::ops
