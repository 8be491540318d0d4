// Check functions of conv, pooling, gemm/matmul and batchnorm (see support_ops.h).
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/support_ops.h"

namespace jetplan::converter::support {
namespace {

// Window attributes are bounded so that the output size arithmetic cannot overflow on a
// hostile file.
constexpr int64_t kMaxWindow = int64_t{1} << 31;

int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe) {
  const int64_t span = in + pb + pe - dil * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// The spatial attributes every conv and pool shares, with auto_pad turned into explicit pads.
// ConvertError when the attributes contradict the input.
void resolve_window(const Node& node, const Shape& x, OpDesc* op) {
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> ones(spatial, 1);
  op->stride = attr_ints(node, "strides", ones);
  op->dilation = attr_ints(node, "dilations", ones);
  if (op->kernel.size() != spatial || op->stride.size() != spatial ||
      op->dilation.size() != spatial)
    fail("node ", node_label(node), ": kernel_shape, strides and dilations need ", spatial,
         " entries for input ", shape_str(x));
  for (size_t i = 0; i < spatial; ++i)
    if (op->kernel[i] < 1 || op->stride[i] < 1 || op->dilation[i] < 1 ||
        op->kernel[i] > kMaxWindow || op->stride[i] > kMaxWindow || op->dilation[i] > kMaxWindow)
      fail("node ", node_label(node), ": kernel, strides and dilations must be in [1, 2^31]");

  const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  op->pad_begin.assign(spatial, 0);
  op->pad_end.assign(spatial, 0);
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = attr_ints(node, "pads", std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
      fail("node ", node_label(node), ": pads needs ", 2 * spatial, " entries");
    for (size_t i = 0; i < spatial; ++i) {
      op->pad_begin[i] = pads[i];
      op->pad_end[i] = pads[spatial + i];
      if (pads[i] < 0 || pads[spatial + i] < 0 || pads[i] > kMaxWindow ||
          pads[spatial + i] > kMaxWindow)
        fail("node ", node_label(node), ": pads must be in [0, 2^31]");
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // Output ceil(in / stride); the odd pad goes to the end (UPPER) or the beginning (LOWER).
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t in = x[i + 2];
      const int64_t out = (in + op->stride[i] - 1) / op->stride[i];
      const int64_t needed = (out - 1) * op->stride[i] + op->dilation[i] * (op->kernel[i] - 1) + 1;
      const int64_t total = needed > in ? needed - in : 0;
      const int64_t small = total / 2;
      op->pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      op->pad_end[i] = total - op->pad_begin[i];
    }
  } else if (auto_pad != "VALID") {
    fail("node ", node_label(node), ": unknown auto_pad '", auto_pad, "'");
  }
}

Shape window_output(const Node& node, const Shape& x, int64_t channels, const OpDesc& op) {
  Shape out = {x[0], channels};
  for (size_t i = 0; i + 2 < x.size(); ++i) {
    const int64_t o = conv_out(x[i + 2], op.kernel[i], op.stride[i], op.dilation[i],
                               op.pad_begin[i], op.pad_end[i]);
    if (o < 1)
      fail("node ", node_label(node), ": the window (kernel ", op.kernel[i], ", dilation ",
           op.dilation[i], ") is larger than the padded input ", shape_str(x));
    out.push_back(o);
  }
  return out;
}

std::string check_spatial_rank(const Shape& x) {
  if (x.size() < 3 || x.size() > 5)
    return cat("input rank ", x.size(), " (jetplan handles 1 to 3 spatial dims: rank 3 to 5)");
  return "";
}

}  // namespace

std::string check_conv(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const Shape& w = input(g, node, 1).shape;
  if (std::string r = check_spatial_rank(x); !r.empty()) return r;
  if (w.size() != x.size())
    fail("node ", node_label(node), ": shape mismatch: weight ", shape_str(w), " and input ",
         shape_str(x), " differ in rank");
  OpDesc& op = node.op;
  op.groups = attr_int(node, "group", 1);
  if (op.groups < 1 || w[1] * op.groups != x[1] || w[0] % op.groups != 0)
    fail("node ", node_label(node), ": shape mismatch: input ", shape_str(x), " with weight ",
         shape_str(w), " and group ", op.groups);
  op.kernel.assign(w.begin() + 2, w.end());
  if (has_attr(node, "kernel_shape") && attr_ints(node, "kernel_shape", {}) != op.kernel)
    fail("node ", node_label(node), ": kernel_shape ",
         shape_str(attr_ints(node, "kernel_shape", {})), " differs from the weight ", shape_str(w));
  if (has_input(node, 2) && input(g, node, 2).shape != Shape{w[0]})
    fail("node ", node_label(node), ": shape mismatch: bias ", shape_str(input(g, node, 2).shape),
         " for ", w[0], " output channels");
  resolve_window(node, x, &op);
  op.family = fb::OpFamily::Conv;
  set_output(g, node, window_output(node, x, w[0], op));
  return "";
}

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
  if (std::string r = check_spatial_rank(x); !r.empty()) return r;
  OpDesc& op = node.op;
  if (!has_attr(node, "kernel_shape"))
    fail("node ", node_label(node), ": the kernel_shape attribute is missing");
  op.kernel = attr_ints(node, "kernel_shape", {});
  resolve_window(node, x, &op);
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
    op.tensor.expand = TensorExpand::kPromote;
    op.tensor.compute_dtype = static_cast<int32_t>(DataType::kFloat32);
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
  if (std::string r = check_spatial_rank(x); !r.empty()) return r;
  OpDesc& op = node.op;
  const size_t spatial = x.size() - 2;
  op.kernel.assign(x.begin() + 2, x.end());
  op.stride.assign(spatial, 1);
  op.dilation.assign(spatial, 1);
  op.pad_begin.assign(spatial, 0);
  op.pad_end.assign(spatial, 0);
  op.pool_kind = node.op_type == "GlobalMaxPool" ? fb::PoolKind::Max : fb::PoolKind::Average;
  op.family = fb::OpFamily::Pool;
  Shape out = {x[0], x[1]};
  out.resize(x.size(), 1);
  set_output(g, node, out);
  return "";
}

std::string check_gemm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& a = input(g, node, 0).shape;
  const Shape& b = input(g, node, 1).shape;
  if (a.size() != 2 || b.size() != 2)
    fail("node ", node_label(node), ": Gemm needs 2-D A and B, got ", shape_str(a), " and ",
         shape_str(b));
  OpDesc& op = node.op;
  op.trans_a = attr_int(node, "transA", 0) != 0;
  op.trans_b = attr_int(node, "transB", 0) != 0;
  op.alpha = attr_float(node, "alpha", 1.f);
  op.beta = attr_float(node, "beta", 1.f);
  const int64_t m = op.trans_a ? a[1] : a[0], k = op.trans_a ? a[0] : a[1];
  const int64_t kb = op.trans_b ? b[1] : b[0], n = op.trans_b ? b[0] : b[1];
  if (k != kb)
    fail("node ", node_label(node), ": shape mismatch: A ", shape_str(a), " and B ", shape_str(b),
         " (transA=", op.trans_a, ", transB=", op.trans_b, ") disagree on K");
  if (has_input(node, 2)) {
    const Shape& c = input(g, node, 2).shape;
    Shape out;
    if (c.size() > 2 || !broadcast_shapes(c, {m, n}, &out) || out != Shape{m, n})
      fail("node ", node_label(node), ": shape mismatch: C ", shape_str(c),
           " does not broadcast to ", shape_str({m, n}));
  }
  op.family = fb::OpFamily::Gemm;
  set_output(g, node, {m, n});
  return "";
}

std::string check_matmul(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  Shape a = input(g, node, 0).shape;
  Shape b = input(g, node, 1).shape;
  if (a.empty() || b.empty()) fail("node ", node_label(node), ": MatMul of a scalar");
  OpDesc& op = node.op;
  op.a_vector = a.size() == 1;
  op.b_vector = b.size() == 1;
  if (op.a_vector) a.insert(a.begin(), 1);
  if (op.b_vector) b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), kb = b[b.size() - 2], n = b.back();
  if (k != kb)
    fail("node ", node_label(node), ": shape mismatch: ", shape_str(input(g, node, 0).shape), " x ",
         shape_str(input(g, node, 1).shape), " disagree on K");
  const Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  Shape batch;
  if (!broadcast_shapes(batch_a, batch_b, &batch))
    fail("node ", node_label(node), ": shape mismatch: batch dims ", shape_str(batch_a), " and ",
         shape_str(batch_b), " do not broadcast");
  Shape out = batch;
  if (!op.a_vector) out.push_back(m);
  if (!op.b_vector) out.push_back(n);
  op.family = fb::OpFamily::Gemm;
  op.alpha = 1.f;
  op.beta = 1.f;
  set_output(g, node, out);
  return "";
}

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
  node.op.family = fb::OpFamily::BatchNorm;
  set_output(g, node, x);
  return "";
}

}  // namespace jetplan::converter::support
