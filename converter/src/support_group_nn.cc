// Check functions of the nn op families and their op table: ConvTranspose, Resize/Upsample, the
// Reduce* ops, ArgMax/ArgMin, TopK, the normalizations (Instance, Layer, Group, LRN) and
// NonMaxSuppression. Each resolves a node to one step (kernels/params_nn.h says what the step
// computes) or gives the reason it cannot run; expand_nn adds the views that keepdims=0 needs.
#include <algorithm>
#include <cmath>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/support_groups.h"
#include "converter/src/support_ops.h"
#include "converter/src/table.h"

namespace jetplan::converter {
namespace {

using namespace support;

// Window attributes are bounded, as in support_nn.cc, so that no size arithmetic overflows.
constexpr int64_t kMaxWindow = int64_t{1} << 31;

std::string run_time_reason(const char* what) {
  return cat("its ", what, " input is computed at run time (jetplan needs it constant)");
}

// An optional input that is present and not an empty constant (opset 11 Resize passes an empty
// scales tensor when it gives sizes).
bool given(const Graph& g, const Node& node, size_t i) {
  if (!has_input(node, i)) return false;
  const Value& v = g.values[node.inputs[i]];
  return !(v.is_constant && v.shape_known && shape_count(v.shape) == 0);
}

// True when a live node reads value `id` or it is a graph output.
bool is_used(const Graph& g, int id) {
  if (id < 0) return false;
  if (g.values[id].graph_output) return true;
  for (const Node& n : g.nodes)
    if (!n.dead && std::find(n.inputs.begin(), n.inputs.end(), id) != n.inputs.end()) return true;
  return false;
}

// Sorted, distinct, non-negative axes; ConvertError naming the node otherwise.
std::vector<int32_t> resolve_axes(const Node& node, const std::vector<int64_t>& axes,
                                  int64_t rank) {
  std::vector<int32_t> out;
  for (int64_t a : axes) out.push_back(static_cast<int32_t>(normalize_axis(node, a, rank)));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    fail("node ", node_label(node), ": axes ", shape_str(axes), " name a dim twice");
  return out;
}

// ---------------------------------------------------------------------------- Reduce*, Arg*

struct ReduceName {
  const char* op_type;
  fb::ReduceOp op;
};
constexpr ReduceName kReduceOps[] = {
    {"ReduceL1", fb::ReduceOp::L1},         {"ReduceL2", fb::ReduceOp::L2},
    {"ReduceLogSum", fb::ReduceOp::LogSum}, {"ReduceLogSumExp", fb::ReduceOp::LogSumExp},
    {"ReduceMax", fb::ReduceOp::Max},       {"ReduceMean", fb::ReduceOp::Mean},
    {"ReduceMin", fb::ReduceOp::Min},       {"ReduceProd", fb::ReduceOp::Prod},
    {"ReduceSum", fb::ReduceOp::Sum},       {"ReduceSumSquare", fb::ReduceOp::SumSquare},
};

// Output 0 as the step writes it (`step`, reduced dims of extent 1) and as ONNX declares it
// (`out`); they differ with keepdims=0, and expand_nn then adds the view.
void set_reduced_output(Graph& g, Node& node, DataType dtype, const Shape& step, const Shape& out) {
  node.op.nn.keepdims_view = step != out;
  node.op.nn.step_shape = step;
  set_output_typed(g, node, 0, dtype, out);
}

// Float32, or float64 (the CPU backend's Reduce computes it in double throughout).
std::string check_reduce(Graph& g, Node& node) {
  const DataType dtype = input(g, node, 0).dtype;
  if (dtype != DataType::kFloat64)
    if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  // The axes are an input since opset 13 (ReduceSum) or 18 (the others), an attribute before.
  const bool axes_input = g.opset >= 18 || (g.opset >= 13 && node.op_type == "ReduceSum");
  std::vector<int64_t> axes;
  if (axes_input) {
    if (has_input(node, 1)) {
      const Value& a = input(g, node, 1);
      if (!a.is_constant) return run_time_reason("axes");
      axes = read_ints(a);
    }
  } else {
    axes = attr_ints(node, "axes", {});
  }
  const bool keepdims = attr_int(node, "keepdims", 1) != 0;
  node.inputs.resize(1);
  if (axes.empty() && axes_input && attr_int(node, "noop_with_empty_axes", 0) != 0) {
    node.op.family = fb::OpFamily::Copy;  // ONNX: the input unchanged
    node.op.removable = true;
    set_output_typed(g, node, 0, dtype, x);
    return "";
  }
  std::vector<int32_t> reduced;
  if (axes.empty()) {
    for (int32_t d = 0; d < rank; ++d) reduced.push_back(d);
  } else {
    reduced = resolve_axes(node, axes, rank);
  }
  Shape step = x, out;
  for (int32_t d : reduced) step[d] = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (keepdims || !std::binary_search(reduced.begin(), reduced.end(), d)) out.push_back(step[d]);
  for (const ReduceName& r : kReduceOps)
    if (node.op_type == r.op_type) node.op.nn.reduce_op = r.op;
  node.op.nn.axes = reduced;
  node.op.family = fb::OpFamily::Reduce;
  set_reduced_output(g, node, dtype, step, out);
  return "";
}

std::string check_arg_reduce(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": ", node.op_type, " of a scalar");
  const int64_t axis =
      normalize_axis(node, attr_int(node, "axis", 0), static_cast<int64_t>(x.size()));
  const bool keepdims = attr_int(node, "keepdims", 1) != 0;
  Shape step = x, out;
  step[axis] = 1;
  for (size_t d = 0; d < x.size(); ++d)
    if (keepdims || static_cast<int64_t>(d) != axis) out.push_back(step[d]);
  node.op.nn.arg_kind = node.op_type == "ArgMax" ? fb::ArgKind::Max : fb::ArgKind::Min;
  node.op.nn.select_last_index = attr_int(node, "select_last_index", 0) != 0;
  node.op.axis = static_cast<int32_t>(axis);
  node.op.family = fb::OpFamily::ArgReduce;
  set_reduced_output(g, node, DataType::kInt64, step, out);
  return "";
}

// ------------------------------------------------------------------------------------- TopK

std::string check_topk(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;  // a copy: new values may move g.values below
  if (x.empty()) fail("node ", node_label(node), ": TopK of a scalar");
  const int64_t axis =
      normalize_axis(node, attr_int(node, "axis", -1), static_cast<int64_t>(x.size()));
  int64_t k = 0;
  if (g.opset < 10) {
    if (!has_attr(node, "k")) fail("node ", node_label(node), ": the k attribute is missing");
    k = attr_int(node, "k", 0);
  } else {
    const Value& kv = input(g, node, 1);
    if (!kv.is_constant) return run_time_reason("K");
    const std::vector<int64_t> ks = read_ints(kv);
    if (ks.size() != 1) fail("node ", node_label(node), ": K has ", ks.size(), " elements, not 1");
    k = ks[0];
  }
  if (k < 0 || k > x[axis])
    fail("node ", node_label(node), ": k = ", k, " is outside [0, ", x[axis], "] (axis ", axis,
         " of ", shape_str(x), ")");
  node.op.nn.largest = attr_int(node, "largest", 1) != 0;
  node.op.axis = static_cast<int32_t>(axis);
  node.op.family = fb::OpFamily::TopK;
  node.op.workspace_bytes = static_cast<uint64_t>(x[axis]) * sizeof(int64_t);
  node.inputs.resize(1);
  // The step writes both outputs; one the model leaves unnamed gets a value of its own.
  node.outputs.resize(2, -1);
  Shape out = x;
  out[axis] = k;
  if (node.outputs[1] < 0)
    node.outputs[1] = new_value(g, node.name + ":indices", DataType::kInt64, out);
  if (node.outputs[0] < 0)
    node.outputs[0] = new_value(g, node.name + ":values", DataType::kFloat32, out);
  set_output_typed(g, node, 0, DataType::kFloat32, out);
  set_output_typed(g, node, 1, DataType::kInt64, out);
  return "";
}

// --------------------------------------------------------------------------- normalizations

// stash_type (LayerNormalization 17, GroupNormalization 21): the type of the statistics.
std::string check_stash_type(const Node& node) {
  const int64_t stash = attr_int(node, "stash_type", 1);
  if (stash != 1)
    return cat("stash_type=", stash, " (jetplan computes the statistics in float32 or wider)");
  return "";
}

// The normalizations read x as [N, C, ...].
void require_channels(const Node& node, const Shape& x) {
  if (x.size() < 2)
    fail("node ", node_label(node), ": input ", shape_str(x), " has no channel dim");
}

// Parameter input i must have exactly `shape`.
void expect_shape(const Graph& g, const Node& node, size_t i, const char* what,
                  const Shape& shape) {
  const Shape& s = input(g, node, i).shape;
  if (s != shape)
    fail("node ", node_label(node), ": shape mismatch: ", what, " '", input(g, node, i).name,
         "' is ", shape_str(s), ", expected ", shape_str(shape));
}

std::string check_instance_norm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  require_channels(node, x);
  expect_shape(g, node, 1, "scale", {x[1]});
  expect_shape(g, node, 2, "bias", {x[1]});
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  node.op.family = fb::OpFamily::InstanceNorm;
  set_output(g, node, x);
  return "";
}

// Input i (scale or bias) of a LayerNormalization, which broadcasts to the normalized shape:
// the value the step reads, with one element per normalized element (a constant is expanded
// now), or -1 with *reason set.
int layer_norm_param(Graph& g, const Node& node, size_t i, const Shape& normalized,
                     std::string* reason) {
  const Value& v = input(g, node, i);
  Shape b;
  if (!broadcast_shapes(v.shape, normalized, &b) || b != normalized)
    fail("node ", node_label(node), ": shape mismatch: '", v.name, "' ", shape_str(v.shape),
         " does not broadcast to the normalized shape ", shape_str(normalized));
  if (shape_count(v.shape) == shape_count(normalized)) return node.inputs[i];
  if (!v.is_constant) {
    *reason = cat("its input '", v.name, "' ", shape_str(v.shape),
                  " broadcasts to the normalized shape and is computed at run time (jetplan "
                  "needs it constant or of the normalized shape)");
    return -1;
  }
  const std::vector<int64_t> index = fold::broadcast_index(v.shape, normalized);
  std::vector<uint8_t> data(index.size() * sizeof(float));
  for (size_t k = 0; k < index.size(); ++k)
    std::copy_n(v.data.begin() + index[k] * sizeof(float), sizeof(float),
                data.begin() + k * sizeof(float));
  return new_constant(g, v.name + ":" + shape_str(normalized), DataType::kFloat32, normalized,
                      std::move(data));
}

std::string check_layer_norm(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  if (std::string r = check_stash_type(node); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": LayerNormalization of a scalar");
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(node, attr_int(node, "axis", -1), rank);
  const Shape normalized(x.begin() + axis, x.end());
  std::string reason;
  const int scale = layer_norm_param(g, node, 1, normalized, &reason);
  if (scale < 0) return reason;
  const bool has_bias = has_input(node, 2);
  const int bias = has_bias ? layer_norm_param(g, node, 2, normalized, &reason) : -1;
  if (has_bias && bias < 0) return reason;
  node.inputs = {node.inputs[0], scale};
  if (has_bias) node.inputs.push_back(bias);
  NnDesc& nn = node.op.nn;
  nn.has_bias = has_bias;
  node.op.axis = static_cast<int32_t>(axis);
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  node.op.family = fb::OpFamily::LayerNorm;
  set_output(g, node, x);
  // Mean and InvStdDev: written when something reads them, dropped otherwise.
  Shape stats(x.begin(), x.begin() + axis);
  stats.resize(x.size(), 1);
  node.outputs.resize(3, -1);
  for (size_t i = 1; i < 3; ++i) {
    if (!is_used(g, node.outputs[i])) {
      node.outputs[i] = -1;
      continue;
    }
    (i == 1 ? nn.has_mean : nn.has_inv_std_dev) = true;
    set_output_typed(g, node, i, DataType::kFloat32, stats);
  }
  return "";
}

std::string check_group_norm(Graph& g, Node& node) {
  if (g.opset < 18)
    return cat("GroupNormalization needs opset 18 or later; the model imports opset ", g.opset);
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  if (std::string r = check_stash_type(node); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  require_channels(node, x);
  if (!has_attr(node, "num_groups"))
    fail("node ", node_label(node), ": the num_groups attribute is missing");
  const int64_t groups = attr_int(node, "num_groups", 1);
  if (groups < 1 || x[1] % groups != 0)
    fail("node ", node_label(node), ": num_groups ", groups, " does not divide the ", x[1],
         " channels of ", shape_str(x));
  // Opset 18 scales each group; opset 21 each channel.
  const bool per_group = g.opset < 21;
  const Shape param = {per_group ? groups : x[1]};
  expect_shape(g, node, 1, "scale", param);
  expect_shape(g, node, 2, "bias", param);
  node.op.groups = groups;
  node.op.nn.affine_per_group = per_group;
  node.op.epsilon = attr_float(node, "epsilon", 1e-5f);
  node.op.family = fb::OpFamily::GroupNorm;
  set_output(g, node, x);
  return "";
}

std::string check_lrn(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  require_channels(node, x);
  if (!has_attr(node, "size")) fail("node ", node_label(node), ": the size attribute is missing");
  NnDesc& nn = node.op.nn;
  nn.lrn_size = attr_int(node, "size", 1);
  if (nn.lrn_size < 1 || nn.lrn_size > kMaxWindow)
    fail("node ", node_label(node), ": size ", nn.lrn_size, " is outside [1, 2^31]");
  nn.lrn_alpha = attr_float(node, "alpha", 1e-4f);
  nn.lrn_beta = attr_float(node, "beta", 0.75f);
  nn.lrn_bias = attr_float(node, "bias", 1.f);
  node.op.family = fb::OpFamily::Lrn;
  set_output(g, node, x);
  return "";
}

// ---------------------------------------------------------------------------- ConvTranspose

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

std::string check_conv_transpose(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  const Shape& w = input(g, node, 1).shape;
  if (x.size() < 3 || x.size() > 5)
    return cat("input rank ", x.size(), " (jetplan handles 1 to 3 spatial dims: rank 3 to 5)");
  if (w.size() != x.size())
    fail("node ", node_label(node), ": shape mismatch: weight ", shape_str(w), " and input ",
         shape_str(x), " differ in rank");
  const size_t spatial = x.size() - 2;
  OpDesc& op = node.op;
  op.groups = attr_int(node, "group", 1);
  if (op.groups < 1 || w[0] != x[1] || x[1] % op.groups != 0)
    fail("node ", node_label(node), ": shape mismatch: input ", shape_str(x), " with weight ",
         shape_str(w), " and group ", op.groups);
  const int64_t out_channels = w[1] * op.groups;
  op.kernel.assign(w.begin() + 2, w.end());
  if (has_attr(node, "kernel_shape") && attr_ints(node, "kernel_shape", {}) != op.kernel)
    fail("node ", node_label(node), ": kernel_shape ",
         shape_str(attr_ints(node, "kernel_shape", {})), " differs from the weight ", shape_str(w));
  if (has_input(node, 2) && input(g, node, 2).shape != Shape{out_channels})
    fail("node ", node_label(node), ": shape mismatch: bias ", shape_str(input(g, node, 2).shape),
         " for ", out_channels, " output channels");
  const std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  op.stride = attr_ints(node, "strides", ones);
  op.dilation = attr_ints(node, "dilations", ones);
  std::vector<int64_t>& output_padding = op.nn.output_padding;
  output_padding = attr_ints(node, "output_padding", zeros);
  if (op.stride.size() != spatial || op.dilation.size() != spatial ||
      output_padding.size() != spatial)
    fail("node ", node_label(node), ": strides, dilations and output_padding need ", spatial,
         " entries for input ", shape_str(x));
  for (size_t i = 0; i < spatial; ++i)
    if (op.kernel[i] > kMaxWindow || op.stride[i] < 1 || op.stride[i] > kMaxWindow ||
        op.dilation[i] < 1 || op.dilation[i] > kMaxWindow || output_padding[i] < 0 ||
        output_padding[i] > kMaxWindow || x[i + 2] > kMaxWindow)
      fail("node ", node_label(node),
           ": kernel, strides and dilations must be in [1, 2^31], "
           "output_padding and the input size in [0, 2^31]");

  // The full transposed convolution has stride * (in - 1) + output_padding + span positions;
  // pads (given, or derived from output_shape / auto_pad) crop it at both ends.
  const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID")
    fail("node ", node_label(node), ": unknown auto_pad '", auto_pad, "'");
  std::vector<int64_t> output_shape = attr_ints(node, "output_shape", {});
  if (output_shape.size() == spatial + 2)
    output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (has_attr(node, "output_shape") && output_shape.size() != spatial)
    fail("node ", node_label(node), ": output_shape needs ", spatial, " entries");
  const std::vector<int64_t> pads = attr_ints(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (pads.size() != 2 * spatial)
    fail("node ", node_label(node), ": pads needs ", 2 * spatial, " entries");
  op.pad_begin.assign(spatial, 0);
  op.pad_end.assign(spatial, 0);
  Shape out = {x[0], out_channels};
  for (size_t i = 0; i < spatial; ++i) {
    // Each term is below 2^62 (the operands are at most 2^31), so the sum fits in 128 bits.
    const __int128 wide = static_cast<__int128>(op.stride[i]) * (x[i + 2] - 1) + output_padding[i] +
                          static_cast<__int128>(op.dilation[i]) * (op.kernel[i] - 1) + 1;
    if (wide > kMaxWindow)
      fail("node ", node_label(node), ": the transposed convolution of ", shape_str(x),
           " is too large");
    const int64_t full = static_cast<int64_t>(wide);
    int64_t size = full;
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // ONNX: total = full - size, split with the odd one at the end for SAME_UPPER and at the
      // beginning otherwise (floor division, as the ONNX reference; a negative total asks for
      // positions past the full convolution, which are zero + bias).
      size = output_shape.empty() ? x[i + 2] * op.stride[i] : output_shape[i];
      if (size < 1 || size > kMaxWindow)
        fail("node ", node_label(node), ": output_shape entries must be in [1, 2^31]");
      const int64_t total = full - size;
      op.pad_begin[i] = auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
      op.pad_end[i] = total - op.pad_begin[i];
    } else if (auto_pad == "NOTSET") {
      op.pad_begin[i] = pads[i];
      op.pad_end[i] = pads[spatial + i];
      if (pads[i] < 0 || pads[i] > kMaxWindow || pads[spatial + i] < 0 ||
          pads[spatial + i] > kMaxWindow)
        fail("node ", node_label(node), ": pads must be in [0, 2^31]");
      size = full - pads[i] - pads[spatial + i];
      if (size < 1)
        fail("node ", node_label(node), ": pads ", shape_str(pads), " crop the whole output of ",
             shape_str(x));
    }
    out.push_back(size);
  }
  op.nn.has_bias = has_input(node, 2);
  if (!op.nn.has_bias) node.inputs.resize(2);
  op.family = fb::OpFamily::ConvTranspose;
  set_output(g, node, out);
  return "";
}

// ---------------------------------------------------------------------------- Resize, Upsample

struct Named {
  const char* name;
  uint8_t value;
};

constexpr Named kCoordModes[] = {
    {"half_pixel", uint8_t(fb::ResizeCoord::HalfPixel)},
    {"pytorch_half_pixel", uint8_t(fb::ResizeCoord::PytorchHalfPixel)},
    {"align_corners", uint8_t(fb::ResizeCoord::AlignCorners)},
    {"asymmetric", uint8_t(fb::ResizeCoord::Asymmetric)},
    {"tf_crop_and_resize", uint8_t(fb::ResizeCoord::TfCropAndResize)},
    {"tf_half_pixel_for_nn", uint8_t(fb::ResizeCoord::TfHalfPixelForNn)},
};
constexpr Named kNearestModes[] = {
    {"round_prefer_floor", uint8_t(fb::ResizeNearest::RoundPreferFloor)},
    {"round_prefer_ceil", uint8_t(fb::ResizeNearest::RoundPreferCeil)},
    {"floor", uint8_t(fb::ResizeNearest::Floor)},
    {"ceil", uint8_t(fb::ResizeNearest::Ceil)},
};
constexpr Named kModes[] = {
    {"nearest", uint8_t(fb::ResizeMode::Nearest)},
    {"linear", uint8_t(fb::ResizeMode::Linear)},
    {"cubic", uint8_t(fb::ResizeMode::Cubic)},
};

template <size_t N>
bool lookup(const Named (&table)[N], const std::string& name, uint8_t* out) {
  for (const Named& e : table)
    if (name == e.name) {
      *out = e.value;
      return true;
    }
  return false;
}

// Upsample (opset 7-9) and Resize of opset 10 have no coordinate modes: ONNX Runtime, against
// which such models were exported, maps output x to x / scale and takes the floor when a dim
// grows, the ceiling when it shrinks. The kernel has one rounding for all dims.
std::string set_legacy_nearest(NnDesc* nn) {
  bool up = false, down = false;
  for (double s : nn->scale) {
    up = up || s > 1;
    down = down || s < 1;
  }
  if (up && down)
    return "nearest mode that enlarges some dims and shrinks others (its rounding differs per "
           "dim in ONNX Runtime; jetplan rounds all dims alike)";
  nn->nearest = down ? fb::ResizeNearest::Ceil : fb::ResizeNearest::Floor;
  return "";
}

// Fills scale, resized_length and the output shape from `scales` (ONNX: out = floor(in *
// scale), computed in float as ONNX shape inference does; the resized length in * scale, in
// double) or from `sizes` (scale out / in, resized length out).
Shape resize_from_scales(const Node& node, const Shape& x, const std::vector<double>& scales,
                         NnDesc* nn) {
  if (scales.size() != x.size())
    fail("node ", node_label(node), ": scales has ", scales.size(), " entries for input ",
         shape_str(x));
  Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    const double s = scales[d];
    if (!(s > 0) || !std::isfinite(s))
      fail("node ", node_label(node), ": scale ", s, " of dim ", d, " is not a positive number");
    const float product = static_cast<float>(x[d]) * static_cast<float>(s);
    if (!(product < 1e15f)) fail("node ", node_label(node), ": scale ", s, " is too large");
    out.push_back(static_cast<int64_t>(std::floor(product)));
    if (out.back() < 1)
      fail("node ", node_label(node), ": scale ", s, " makes dim ", d, " of ", shape_str(x),
           " empty");
    nn->scale.push_back(s);
    nn->resized_length.push_back(static_cast<double>(x[d]) * s);
  }
  return out;
}

Shape resize_from_sizes(const Node& node, const Shape& x, const std::vector<int64_t>& sizes,
                        NnDesc* nn) {
  if (sizes.size() != x.size())
    fail("node ", node_label(node), ": sizes has ", sizes.size(), " entries for input ",
         shape_str(x));
  for (size_t d = 0; d < x.size(); ++d) {
    if (sizes[d] < 1 || sizes[d] > (int64_t{1} << 40))
      fail("node ", node_label(node), ": size ", sizes[d], " of dim ", d, " is out of range");
    nn->scale.push_back(static_cast<double>(sizes[d]) / static_cast<double>(x[d]));
    nn->resized_length.push_back(static_cast<double>(sizes[d]));
  }
  return sizes;
}

// Upsample: opset 7 takes the scales as an attribute, opset 9 as an input.
std::string check_upsample(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": Upsample of a scalar");
  std::vector<double> scales;
  if (g.opset < 9) {
    auto it = node.attrs.find("scales");
    if (it == node.attrs.end() || it->second.kind != Attribute::Kind::kFloats)
      fail("node ", node_label(node), ": the scales attribute (floats) is missing");
    scales.assign(it->second.floats.begin(), it->second.floats.end());
  } else {
    const Value& s = input(g, node, 1);
    if (!s.is_constant) return run_time_reason("scales");
    scales = read_doubles(s);
  }
  NnDesc& nn = node.op.nn;
  const std::string mode = attr_string(node, "mode", "nearest");
  if (mode == "nearest") {
    nn.resize_mode = fb::ResizeMode::Nearest;
  } else if (mode == "linear" || mode == "bilinear") {
    nn.resize_mode = fb::ResizeMode::Linear;
  } else {
    fail("node ", node_label(node), ": unknown mode '", mode, "'");
  }
  nn.coord = fb::ResizeCoord::Asymmetric;
  const Shape out = resize_from_scales(node, x, scales, &nn);
  if (nn.resize_mode == fb::ResizeMode::Nearest)
    if (std::string r = set_legacy_nearest(&nn); !r.empty()) return r;
  nn.roi_start.assign(x.size(), 0.0);
  nn.roi_end.assign(x.size(), 1.0);
  node.op.family = fb::OpFamily::Resize;
  node.inputs.resize(1);
  set_output(g, node, out);
  return "";
}

std::string check_resize(Graph& g, Node& node) {
  if (g.opset < 10) return cat("Resize needs opset 10 or later; the model imports opset ", g.opset);
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape& x = input(g, node, 0).shape;
  if (x.empty()) fail("node ", node_label(node), ": Resize of a scalar");
  const int64_t rank = static_cast<int64_t>(x.size());
  // Opset 18 options: only their defaults.
  if (attr_int(node, "antialias", 0) != 0) return "antialias=1 is not supported";
  const std::string policy = attr_string(node, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    return cat("keep_aspect_ratio_policy '", policy, "' is not supported (only 'stretch')");
  if (has_attr(node, "axes")) {
    const std::vector<int32_t> axes = resolve_axes(node, attr_ints(node, "axes", {}), rank);
    if (static_cast<int64_t>(axes.size()) != rank || axes.back() != rank - 1)
      return "an axes attribute that leaves dims out is not supported (give scales or sizes for "
             "every dim)";
  }
  NnDesc& nn = node.op.nn;
  uint8_t v = 0;
  const std::string mode = attr_string(node, "mode", "nearest");
  if (!lookup(kModes, mode, &v) || (g.opset < 11 && mode == "cubic"))
    fail("node ", node_label(node), ": unknown mode '", mode, "'");
  nn.resize_mode = static_cast<fb::ResizeMode>(v);

  // Inputs: X, scales (opset 10); X, roi, scales, sizes (opset 11 on, roi and scales optional
  // since 13).
  const size_t scales_at = g.opset < 11 ? 1 : 2;
  const bool has_scales = given(g, node, scales_at);
  const bool has_sizes = g.opset >= 11 && given(g, node, 3);
  if (has_scales == has_sizes)
    fail("node ", node_label(node), ": Resize needs exactly one of scales and sizes");
  Shape out;
  if (has_scales) {
    const Value& s = input(g, node, scales_at);
    if (!s.is_constant) return run_time_reason("scales");
    out = resize_from_scales(node, x, read_doubles(s), &nn);
  } else {
    const Value& s = input(g, node, 3);
    if (!s.is_constant) return run_time_reason("sizes");
    out = resize_from_sizes(node, x, read_ints(s), &nn);
  }
  nn.roi_start.assign(x.size(), 0.0);
  nn.roi_end.assign(x.size(), 1.0);

  if (g.opset < 11) {
    nn.coord = fb::ResizeCoord::Asymmetric;
    if (nn.resize_mode == fb::ResizeMode::Nearest)
      if (std::string r = set_legacy_nearest(&nn); !r.empty()) return r;
  } else {
    const std::string coord = attr_string(node, "coordinate_transformation_mode", "half_pixel");
    if (!lookup(kCoordModes, coord, &v) || (coord == "tf_half_pixel_for_nn" && g.opset >= 13))
      return cat("coordinate_transformation_mode '", coord, "' is not supported");
    nn.coord = static_cast<fb::ResizeCoord>(v);
    const std::string nearest = attr_string(node, "nearest_mode", "round_prefer_floor");
    if (!lookup(kNearestModes, nearest, &v))
      fail("node ", node_label(node), ": unknown nearest_mode '", nearest, "'");
    nn.nearest = static_cast<fb::ResizeNearest>(v);
    nn.cubic_coeff_a = attr_float(node, "cubic_coeff_a", -0.75f);
    nn.exclude_outside = attr_int(node, "exclude_outside", 0) != 0;
    nn.extrapolation_value = attr_float(node, "extrapolation_value", 0.f);
    if (!std::isfinite(nn.cubic_coeff_a) || !std::isfinite(nn.extrapolation_value))
      fail("node ", node_label(node), ": cubic_coeff_a and extrapolation_value must be finite");
    if (nn.coord == fb::ResizeCoord::TfCropAndResize && given(g, node, 1)) {
      const Value& roi = input(g, node, 1);
      if (!roi.is_constant) return run_time_reason("roi");
      const std::vector<double> r = read_doubles(roi);
      if (static_cast<int64_t>(r.size()) != 2 * rank)
        fail("node ", node_label(node), ": roi has ", r.size(), " entries, expected ", 2 * rank);
      for (double e : r)
        if (!std::isfinite(e)) fail("node ", node_label(node), ": roi holds ", e);
      nn.roi_start.assign(r.begin(), r.begin() + rank);
      nn.roi_end.assign(r.begin() + rank, r.end());
    }
  }
  node.op.family = fb::OpFamily::Resize;
  node.inputs.resize(1);
  set_output(g, node, out);
  return "";
}

// ------------------------------------------------------------------------ NonMaxSuppression

std::string check_nms(Graph& g, Node& node) {
  if (std::string r = float_inputs(g, node, {0, 1}); !r.empty()) return r;
  const Shape& boxes = input(g, node, 0).shape;
  const Shape& scores = input(g, node, 1).shape;
  if (boxes.size() != 3 || boxes[2] != 4 || scores.size() != 3 || scores[0] != boxes[0] ||
      scores[2] != boxes[1])
    fail("node ", node_label(node), ": shape mismatch: boxes ", shape_str(boxes), " and scores ",
         shape_str(scores), " are not [B, N, 4] and [B, C, N]");
  NnDesc& nn = node.op.nn;
  const int64_t center = attr_int(node, "center_point_box", 0);
  if (center != 0 && center != 1)
    fail("node ", node_label(node), ": center_point_box is ", center, ", not 0 or 1");
  nn.center_point_box = center == 1;
  if (has_input(node, 2)) {
    const Value& m = input(g, node, 2);
    if (!m.is_constant) return run_time_reason("max_output_boxes_per_class");
    const std::vector<int64_t> v = read_ints(m);
    if (v.size() != 1)
      fail("node ", node_label(node), ": max_output_boxes_per_class has ", v.size(), " elements");
    nn.max_output_per_class = v[0];
  }
  if (nn.max_output_per_class < 1)
    return cat("max_output_boxes_per_class is ", nn.max_output_per_class,
               ": the output is always empty (jetplan refuses a NonMaxSuppression that selects "
               "nothing)");
  if (has_input(node, 3) && !constant_scalar(g, node, 3, &nn.iou_threshold))
    return run_time_reason("iou_threshold (a scalar)");
  nn.has_score_threshold = has_input(node, 4);
  if (nn.has_score_threshold && !constant_scalar(g, node, 4, &nn.score_threshold))
    return run_time_reason("score_threshold (a scalar)");
  // The row count is known only at run time; the C API reports it for a graph output, so the
  // selection must be one, read by no node (which would see the unused rows too).
  const int y = node.outputs.empty() ? -1 : node.outputs[0];
  if (y < 0) fail("node ", node_label(node), ": its output has no name");
  Value& out = g.values[y];
  if (!out.graph_output || std::count(g.outputs.begin(), g.outputs.end(), y) != 1)
    return cat("its output '", out.name,
               "' is not a graph output (or is one twice); jetplan "
               "gives the run-time number of selected boxes to a graph output only");
  for (const Node& n : g.nodes)
    if (!n.dead && std::find(n.inputs.begin(), n.inputs.end(), y) != n.inputs.end())
      return cat("its output '", out.name, "' is read by node ", node_label(n),
                 "; jetplan gives the run-time number of selected boxes to a graph output only");
  const int64_t per_class = std::min(nn.max_output_per_class, boxes[1]);
  node.op.count_output = true;
  node.op.workspace_bytes = static_cast<uint64_t>(boxes[1]) * sizeof(int64_t);
  node.op.family = fb::OpFamily::Nms;
  node.inputs.resize(2);
  // The declared extent (if any) is the run-time count; the tensor holds the capacity.
  out.shape_known = false;
  set_output_typed(g, node, 0, DataType::kInt64, {boxes[0] * scores[1] * per_class, 3});
  return "";
}

struct OpCheck {
  const char* op_type;
  CheckFn check;
  // For SUPPORTED_OPS.md: the element types the op's steps take and the restrictions its check
  // enforces, one line each.
  const char* dtypes;
  const char* notes;
};

constexpr const char* kFloat = "float32";
constexpr const char* kReduceDtypes = "float32, float64 (CPU backend only)";
constexpr const char* kReduceNotes =
    "axes constant (attribute, or input since opset 13 for ReduceSum); keepdims 0 or 1; "
    "noop_with_empty_axes";
constexpr const char* kArgNotes = "any axis; keepdims; select_last_index";
constexpr const char* kResizeNotes =
    "scales or sizes (and roi) constant; nearest (every nearest_mode), linear and cubic "
    "(cubic_coeff_a, exclude_outside) with every coordinate_transformation_mode ONNX 1.12 has; "
    "no antialias, keep_aspect_ratio_policy stretch only";

// Sorted by op type.
constexpr OpCheck kOps[] = {
    {"ArgMax", check_arg_reduce, "float32 -> int64", kArgNotes},
    {"ArgMin", check_arg_reduce, "float32 -> int64", kArgNotes},
    {"ConvTranspose", check_conv_transpose, kFloat,
     "1 to 3 spatial dims; groups, dilations, output_padding, output_shape, auto_pad"},
    {"GroupNormalization", check_group_norm, kFloat,
     "opset 18 models (scale and bias per group; accepted without the ops opset 18 redefined: "
     "Reduce* but ReduceSum, Pad, Resize, Split, ScatterElements, ScatterND, LpPool)"},
    {"InstanceNormalization", check_instance_norm, kFloat, "scale and bias per channel"},
    {"LRN", check_lrn, kFloat, "across channels, any size"},
    {"LayerNormalization", check_layer_norm, kFloat,
     "any axis; stash_type 1; scale and bias broadcast to the normalized shape; Mean and "
     "InvStdDev outputs written where read"},
    {"NonMaxSuppression", check_nms, "float32 -> int64",
     "max_output_boxes_per_class >= 1 and the thresholds constant; its output a graph output "
     "read by no node (the selected count is known at run time)"},
    {"ReduceL1", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceL2", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceLogSum", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceLogSumExp", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceMax", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceMean", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceMin", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceProd", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceSum", check_reduce, kReduceDtypes, kReduceNotes},
    {"ReduceSumSquare", check_reduce, kReduceDtypes, kReduceNotes},
    {"Resize", check_resize, kFloat, kResizeNotes},
    {"TopK", check_topk, "float32 -> float32, int64",
     "K constant (0: empty outputs, no step); any axis; largest 0 or 1 (sorted)"},
    {"Upsample", check_upsample, kFloat,
     "scales constant; nearest or linear (ONNX Runtime's legacy rounding); nearest may not "
     "enlarge some dims and shrink others"},
};
static_assert(sorted_by_op_type(kOps), "kOps must be sorted by op type");

}  // namespace

CheckFn find_check_nn(const std::string& op_type) {
  for (const OpCheck& e : kOps)
    if (op_type == e.op_type) return e.check;
  return nullptr;
}

bool find_doc_nn(const std::string& op_type, OpDoc* doc) {
  for (const OpCheck& e : kOps)
    if (op_type == e.op_type) {
      *doc = {e.dtypes, e.notes};
      return true;
    }
  return false;
}

// Reduce and ArgReduce with keepdims=0: the step writes the reduced dims as 1s into a value of
// its own, and a Copy views it as the ONNX output.
bool expand_nn(Graph& g, Node& node, std::vector<Node>* out) {
  const fb::OpFamily family = node.op.family;
  if ((family != fb::OpFamily::Reduce && family != fb::OpFamily::ArgReduce) ||
      !node.op.nn.keepdims_view)
    return false;
  const int y = node.outputs[0];
  const Shape step = node.op.nn.step_shape;
  const int kept = new_value(g, g.values[y].name + ":" + shape_str(step), g.values[y].dtype, step);
  node.op.nn.keepdims_view = false;
  node.outputs[0] = kept;
  const std::string copy_name = node.name + ":squeeze";
  out->push_back(std::move(node));
  out->push_back(copy_node(copy_name, kept, y));
  return true;
}

}  // namespace jetplan::converter
