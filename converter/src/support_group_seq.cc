// Check functions of the seq op families and their op table: RNN, LSTM and GRU (one Rnn step
// each, kernels/params_seq.h; their check is in support_group_seq_rnn.cc), QuantizeLinear and
// DequantizeLinear, QLinearMatMul and QLinearConv (kernels/params_quant.h), MatMulInteger and
// ConvInteger, which run as Dequantize + float32 Gemm/Conv + Cast (expand_seq builds those
// steps), and DynamicQuantizeLinear.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/support_group_seq.h"
#include "converter/src/support_groups.h"
#include "converter/src/support_ops.h"
#include "converter/src/table.h"
#include "kernels/kernels.h"

namespace jetplan::converter {

std::string seq::not_float(const Value& v, const char* role) {
  return cat(role, " '", v.name, "' is ", dtype_name(v.dtype), " (jetplan needs float32)");
}

namespace {

using seq::not_float;
using support::has_input;
using support::input;
using support::set_output_typed;

// Sizes from the model are bounded before any product is formed (plans hold no larger dims).
constexpr int64_t kMaxDim = int64_t{1} << 40;
constexpr int64_t kMaxWindow = int64_t{1} << 31;
// float32 holds every integer up to 2^24 exactly: the bound on MatMulInteger and ConvInteger
// sums, which run through float32 steps.
constexpr double kExactFloatInteger = 16777216.0;

bool is_quantized(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

std::string not_quantized(const Value& v, const char* role) {
  return cat(role, " '", v.name, "' is ", dtype_name(v.dtype),
             " (jetplan's quantized ops take int8 and uint8)");
}

// The zero point's type must be its tensor's (an ONNX type constraint): a model that breaks it
// is inconsistent.
void check_zero_point_type(const Node& node, const Value& zp, DataType want, const char* role) {
  if (zp.dtype != want)
    fail("node ", node_label(node), ": ", role, " zero point '", zp.name, "' is ",
         dtype_name(zp.dtype), " but its tensor is ", dtype_name(want));
}

// ---------------------------------------------------------------------------- quantized

// The number of scale (or zero point) entries: 1 for per-tensor, else the 1-D extent.
// ConvertError for a scale of rank > 1.
int64_t scale_entries(const Node& node, const Value& v, const char* role) {
  if (v.shape.size() > 1)
    fail("node ", node_label(node), ": ", role, " '", v.name, "' is ", shape_str(v.shape),
         " (a scalar or 1-D tensor is expected)");
  return shape_count(v.shape);
}

// Folding must not turn a small model into a huge one.
constexpr int64_t kMaxFoldBytes = int64_t{256} << 20;

// QuantizeLinear or DequantizeLinear whose inputs are all constants (QDQ models keep weights
// and int32 biases behind a DequantizeLinear) is evaluated now with the runtime's kernels, so
// that its consumers see a constant; the node dies. False, changing nothing, otherwise.
bool fold_quantize_linear(Graph& g, Node& node, const kernels::QuantizeLinearParams& k,
                          DataType out_type) {
  for (int v : node.inputs)
    if (v >= 0 && !g.values[v].is_constant) return false;
  const Value& x = input(g, node, 0);
  const int64_t count = shape_count(x.shape);
  if (checked_bytes(x.shape, dtype_size(out_type)) > kMaxFoldBytes) return false;
  const std::vector<uint8_t>& scale = input(g, node, 1).data;
  const uint8_t* zp = has_input(node, 2) ? input(g, node, 2).data.data() : nullptr;
  std::vector<uint8_t> y(static_cast<size_t>(count) * dtype_size(out_type));
  if (node.op_type == "QuantizeLinear") {
    kernels::cpu::quantize_linear(k, reinterpret_cast<const float*>(x.data.data()),
                                  reinterpret_cast<const float*>(scale.data()), zp, y.data());
  } else if (x.dtype == DataType::kInt32) {
    // int32 (biases of QDQ models): ONNX's (x - zero_point) * scale, in float32 as the kernel
    // computes the 8-bit types.
    const std::vector<int64_t> q = read_ints(x);
    const std::vector<int64_t> zps = zp ? read_ints(input(g, node, 2)) : std::vector<int64_t>(1, 0);
    const float* s = reinterpret_cast<const float*>(scale.data());
    float* out = reinterpret_cast<float*>(y.data());
    for (int64_t i = 0; i < count; ++i) {
      const int64_t c = k.per_channel ? (i / k.inner) % k.channels : 0;
      out[i] = static_cast<float>(q[i] - zps[zps.size() == 1 ? 0 : c]) * s[k.per_channel ? c : 0];
    }
  } else {
    kernels::cpu::dequantize_linear(k, x.data.data(), reinterpret_cast<const float*>(scale.data()),
                                    zp, reinterpret_cast<float*>(y.data()));
  }
  set_output_typed(g, node, 0, out_type, x.shape);
  Value& out = g.values[node.outputs[0]];
  out.is_constant = true;
  out.data = std::move(y);
  out.producer = -1;
  node.dead = true;
  return true;
}

std::string check_quantize_linear(Graph& g, Node& node) {
  const bool quantize = node.op_type == "QuantizeLinear";
  const Value& x = input(g, node, 0);
  const Value& scale = input(g, node, 1);
  // int32 dequantizes only where it folds (biases of QDQ models): no step computes it.
  const bool int32_constant = !quantize && x.dtype == DataType::kInt32 && x.is_constant;
  if (quantize && x.dtype != DataType::kFloat32)
    return cat("input '", x.name, "' is ", dtype_name(x.dtype), " (jetplan quantizes float32)");
  if (!quantize && !is_quantized(x.dtype) && !int32_constant)
    return cat("input '", x.name, "' is ", dtype_name(x.dtype),
               x.dtype == DataType::kInt32
                   ? " and computed at run time (jetplan dequantizes int32 constants only)"
                   : " (jetplan dequantizes int8 and uint8)");
  if (scale.dtype != DataType::kFloat32) return not_float(scale, "scale");
  SeqDesc& d = node.op.seq;
  d = SeqDesc{};
  DataType qtype = quantize ? DataType::kUInt8 : x.dtype;  // ONNX: uint8 without a zero point
  const int64_t entries = scale_entries(node, scale, "scale");
  if (has_input(node, 2)) {
    const Value& zp = input(g, node, 2);
    if (!is_quantized(zp.dtype) && !(int32_constant && zp.dtype == DataType::kInt32))
      return not_quantized(zp, "zero point");
    if (!quantize) check_zero_point_type(node, zp, x.dtype, "the");
    qtype = zp.dtype;
    if (scale_entries(node, zp, "zero point") != entries)
      fail("node ", node_label(node), ": shape mismatch: scale '", scale.name, "' ",
           shape_str(scale.shape), " and zero point '", zp.name, "' ", shape_str(zp.shape));
    d.has_zero_point = true;
  }
  kernels::QuantizeLinearParams k;
  k.qtype = qtype == DataType::kInt8 ? kernels::DType::kInt8 : kernels::DType::kUInt8;
  k.has_zero_point = d.has_zero_point;
  k.inner = shape_count(x.shape);
  if (entries != 1) {
    if (g.opset < 13)
      fail("node ", node_label(node), ": scale '", scale.name, "' ", shape_str(scale.shape),
           " is per-axis, which ", node.op_type, " takes from opset 13 (the model has ", g.opset,
           ")");
    const int64_t axis =
        normalize_axis(node, attr_int(node, "axis", 1), static_cast<int64_t>(x.shape.size()));
    if (x.shape[axis] != entries)
      fail("node ", node_label(node), ": shape mismatch: scale '", scale.name, "' has ", entries,
           " entries for axis ", axis, " of ", shape_str(x.shape));
    d.per_axis = true;
    d.axis = static_cast<int32_t>(axis);
    k.per_channel = true;
    k.outer = shape_count(Shape(x.shape.begin(), x.shape.begin() + axis));
    k.channels = entries;
    k.inner = shape_count(Shape(x.shape.begin() + axis + 1, x.shape.end()));
  }
  const DataType out_type = quantize ? qtype : DataType::kFloat32;
  if (fold_quantize_linear(g, node, k, out_type)) return "";
  node.op.family = quantize ? fb::OpFamily::Quantize : fb::OpFamily::Dequantize;
  set_output_typed(g, node, 0, out_type, x.shape);
  return "";
}

// The scale and zero point of one QLinear operand: float32 and the operand's type, with 1 entry
// or `count` (per row, column or channel). Returns a reason or "".
std::string check_scale_pair(const Graph& g, const Node& node, size_t scale_at, DataType type,
                             int64_t count, const char* role) {
  const Value& scale = input(g, node, scale_at);
  const Value& zp = input(g, node, scale_at + 1);
  if (scale.dtype != DataType::kFloat32) return not_float(scale, cat(role, " scale").c_str());
  check_zero_point_type(node, zp, type, role);
  const int64_t s = scale_entries(node, scale, "scale"), z = scale_entries(node, zp, "zero point");
  if ((s != 1 && s != count) || (z != 1 && z != count))
    fail("node ", node_label(node), ": ", role, " scale '", scale.name, "' ",
         shape_str(scale.shape), " and zero point '", zp.name, "' ", shape_str(zp.shape),
         " need 1 or ", count, " entries");
  return "";
}

// Gives a per-tensor scale or zero point (input `at`) `count` entries when its partner has
// them, so that the step sees both per row/column/channel. Only constants can be widened.
std::string widen_to(Graph& g, Node& node, size_t at, int64_t count) {
  const Value& v = input(g, node, at);
  if (shape_count(v.shape) == count) return "";
  if (!v.is_constant)
    return cat("'", v.name, "' is per-tensor and computed at run time while its partner has ",
               count, " entries (jetplan needs both per-tensor or both per-entry)");
  std::vector<uint8_t> data;
  for (int64_t i = 0; i < count; ++i) data.insert(data.end(), v.data.begin(), v.data.end());
  node.inputs[at] = new_constant(g, cat(v.name, ":x", count), v.dtype, {count}, std::move(data));
  return "";
}

// The shapes of a matrix product as ONNX MatMul defines them (1-D operands, broadcast batch
// dims), restricted to what the plan's steps take: each operand's batch dims equal the
// output's or all 1.
struct MatMulShapes {
  bool a_vector = false, b_vector = false;  // 1-D operands, viewed as [1, K] and [K, 1]
  int64_t M = 0, K = 0, N = 0;
  Shape a, b;    // the operands as matrices (vectors viewed)
  Shape batch;   // the output's batch dims
  Shape y;       // ONNX's output shape (vector dims dropped)
  Shape y_step;  // the step's output: batch + [M, N]
};

// A reason, "" with *out filled, or ConvertError for inconsistent shapes.
std::string matmul_shapes(const Node& node, const Shape& a, const Shape& b, MatMulShapes* out) {
  if (a.empty() || b.empty()) fail("node ", node_label(node), ": ", node.op_type, " of a scalar");
  MatMulShapes& s = *out;
  s.a_vector = a.size() == 1;
  s.b_vector = b.size() == 1;
  s.a = s.a_vector ? Shape{1, a[0]} : a;
  s.b = s.b_vector ? Shape{b[0], 1} : b;
  s.M = s.a[s.a.size() - 2];
  s.K = s.a.back();
  s.N = s.b.back();
  if (s.b[s.b.size() - 2] != s.K)
    fail("node ", node_label(node), ": shape mismatch: A ", shape_str(a), " and B ", shape_str(b),
         " differ in K");
  const Shape batch_a(s.a.begin(), s.a.end() - 2), batch_b(s.b.begin(), s.b.end() - 2);
  if (!broadcast_shapes(batch_a, batch_b, &s.batch))
    fail("node ", node_label(node), ": shape mismatch: batch dims of A ", shape_str(a), " and B ",
         shape_str(b), " do not broadcast");
  for (const Shape* own : {&batch_a, &batch_b}) {
    Shape padded(s.batch.size() - own->size(), 1);
    padded.insert(padded.end(), own->begin(), own->end());
    if (shape_count(*own) != 1 && padded != s.batch)
      return cat("batch dims ", shape_str(*own), " broadcast partially to ", shape_str(s.batch),
                 " (jetplan's ", node.op_type,
                 " needs each operand's batch dims equal to the "
                 "output's or all 1)");
  }
  s.y = s.batch;
  if (!s.a_vector) s.y.push_back(s.M);
  if (!s.b_vector) s.y.push_back(s.N);
  s.y_step = s.batch;
  s.y_step.push_back(s.M);
  s.y_step.push_back(s.N);
  return "";
}

std::string check_qlinear_matmul(Graph& g, Node& node) {
  for (size_t i = 0; i < 8; ++i) input(g, node, i);  // all required
  const Value& a = input(g, node, 0);
  const Value& b = input(g, node, 3);
  const Value& y_zp = input(g, node, 7);
  if (!is_quantized(a.dtype)) return not_quantized(a, "A");
  if (!is_quantized(b.dtype)) return not_quantized(b, "B");
  if (!is_quantized(y_zp.dtype)) return not_quantized(y_zp, "output zero point");
  MatMulShapes mm;
  if (std::string r = matmul_shapes(node, a.shape, b.shape, &mm); !r.empty()) return r;
  // widen_to below adds values: no reference into g.values is used after it.
  const DataType a_type = a.dtype, b_type = b.dtype, y_type = y_zp.dtype;
  if (std::string r = check_scale_pair(g, node, 1, a_type, mm.M, "A"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 4, b_type, mm.N, "B"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 6, y_type, 1, "output"); !r.empty()) return r;
  for (size_t at : {1, 2, 4, 5}) {
    const int64_t count = at < 3 ? mm.M : mm.N;
    const size_t partner = at % 3 == 1 ? at + 1 : at - 1;
    if (shape_count(input(g, node, partner).shape) == count)
      if (std::string r = widen_to(g, node, at, count); !r.empty()) return r;
  }
  SeqDesc& d = node.op.seq;
  d = SeqDesc{};
  d.a_vector = mm.a_vector;
  d.b_vector = mm.b_vector;
  node.op.family = fb::OpFamily::QLinearMatMul;
  set_output_typed(g, node, 0, y_type, mm.y);
  return "";
}

// ---------------------------------------------------------------------- integer products

// The largest |q - zp| of a quantized operand: over the zero points given, or over every
// possible zero point when they are computed at run time (zps == nullptr).
double max_offset(DataType type, const std::vector<int64_t>* zps) {
  const int64_t lo = type == DataType::kInt8 ? -128 : 0, hi = lo + 255;
  if (zps == nullptr) return 255.0;
  int64_t m = 0;
  for (int64_t z : *zps) m = std::max({m, std::abs(lo - z), std::abs(hi - z)});
  return static_cast<double>(m);
}

// The zero points of input `at`: {0} when absent, the values when constant, false when they
// are computed at run time.
bool known_zero_points(const Graph& g, const Node& node, size_t at, std::vector<int64_t>* out) {
  if (!has_input(node, at)) {
    *out = {0};
    return true;
  }
  if (!input(g, node, at).is_constant) return false;
  *out = read_ints(input(g, node, at));
  return true;
}

// Refuses products whose int32 sums float32 might not hold exactly: `bound` is the largest
// |sum| the operands allow.
std::string exact_in_float(const Node& node, double bound) {
  if (bound <= kExactFloatInteger) return "";
  return cat("its int32 sums may reach ", static_cast<int64_t>(bound),
             ", beyond float32's exact integers (2^24; jetplan runs ", node.op_type,
             " as a float32 ", node.op_type == "ConvInteger" ? "Conv" : "MatMul", ")");
}

// The largest sum over k of |b[k][n] - zp[n]| of any column n of any [K, N] matrix of b.
double max_column_sum(const std::vector<int64_t>& b, const std::vector<int64_t>& zps, int64_t K,
                      int64_t N) {
  double best = 0.0;
  for (size_t m0 = 0; m0 < b.size(); m0 += static_cast<size_t>(K * N))
    for (int64_t n = 0; n < N; ++n) {
      const int64_t zp = zps[zps.size() == 1 ? 0 : n];
      double sum = 0.0;
      for (int64_t k = 0; k < K; ++k) sum += static_cast<double>(std::abs(b[m0 + k * N + n] - zp));
      best = std::max(best, sum);
    }
  return best;
}

// The largest sum of |w - zp[c]| over the `inner` elements of any output channel c of w.
double max_channel_sum(const std::vector<int64_t>& w, const std::vector<int64_t>& zps,
                       int64_t inner) {
  double best = 0.0;
  for (size_t c = 0; c * inner < w.size(); ++c) {
    const int64_t zp = zps[zps.size() == 1 ? 0 : c];
    double sum = 0.0;
    for (int64_t i = 0; i < inner; ++i) sum += static_cast<double>(std::abs(w[c * inner + i] - zp));
    best = std::max(best, sum);
  }
  return best;
}

// MatMulInteger (opset 10): int32 (A - a_zp) x (B - b_zp), a_zp per tensor or per row, b_zp
// per tensor or per column.
std::string check_matmul_integer(Graph& g, Node& node) {
  const Value& a = input(g, node, 0);
  const Value& b = input(g, node, 1);
  if (!is_quantized(a.dtype)) return not_quantized(a, "A");
  if (!is_quantized(b.dtype)) return not_quantized(b, "B");
  if (has_input(node, 2)) check_zero_point_type(node, input(g, node, 2), a.dtype, "A");
  if (has_input(node, 3)) check_zero_point_type(node, input(g, node, 3), b.dtype, "B");
  MatMulShapes mm;
  if (std::string r = matmul_shapes(node, a.shape, b.shape, &mm); !r.empty()) return r;
  // Zero points: one, or one per row of A ([M] or [.., M, 1]) / column of B ([N] or [.., 1, N]).
  for (size_t at : {2, 3}) {
    if (!has_input(node, at)) continue;
    const Shape& z = input(g, node, at).shape;
    const int64_t count = at == 2 ? mm.M : mm.N;
    const bool per_entry =
        shape_count(z) == count &&
        (z == Shape{count} || (z.size() >= 2 && shape_count(Shape(z.begin(), z.end() - 2)) == 1 &&
                               (at == 2 ? z[z.size() - 2] == count && z.back() == 1
                                        : z[z.size() - 2] == 1 && z.back() == count)));
    if (shape_count(z) != 1 && !per_entry)
      return cat("zero point '", input(g, node, at).name, "' ", shape_str(z),
                 " is neither per "
                 "tensor nor per ",
                 at == 2 ? "row" : "column", " (jetplan takes those)");
  }
  std::vector<int64_t> a_zp, b_zp;
  const double a_max = max_offset(a.dtype, known_zero_points(g, node, 2, &a_zp) ? &a_zp : nullptr);
  double column = static_cast<double>(mm.K) * 255.0;
  if (b.is_constant && known_zero_points(g, node, 3, &b_zp))
    column = max_column_sum(read_ints(b), b_zp, mm.K, mm.N);
  if (std::string r = exact_in_float(node, a_max * column); !r.empty()) return r;
  SeqDesc& d = node.op.seq;
  d = SeqDesc{};
  d.integer = SeqDesc::Integer::kMatMul;
  d.a_vector = mm.a_vector;
  d.b_vector = mm.b_vector;
  node.op.family = fb::OpFamily::Dequantize;  // a placeholder: expand_seq replaces the node
  set_output_typed(g, node, 0, DataType::kInt32, mm.y);
  return "";
}

// ------------------------------------------------------------------------ convolutions

int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pb, int64_t pe) {
  const int64_t span = in + pb + pe - dil * (k - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// The window of QLinearConv and ConvInteger as of Conv (support_nn.cc): strides, dilations,
// pads or auto_pad resolved into op's explicit pads, and the output shape.
Shape conv_window(const Node& node, const Shape& x, const Shape& w, OpDesc* op) {
  const size_t spatial = x.size() - 2;
  op->groups = attr_int(node, "group", 1);
  if (op->groups < 1 || op->groups > kMaxDim || w[1] * op->groups != x[1] || w[0] % op->groups != 0)
    fail("node ", node_label(node), ": shape mismatch: input ", shape_str(x), " with weight ",
         shape_str(w), " and group ", op->groups);
  op->kernel.assign(w.begin() + 2, w.end());
  if (has_attr(node, "kernel_shape") && attr_ints(node, "kernel_shape", {}) != op->kernel)
    fail("node ", node_label(node), ": kernel_shape ",
         shape_str(attr_ints(node, "kernel_shape", {})), " differs from the weight ", shape_str(w));
  const std::vector<int64_t> ones(spatial, 1);
  op->stride = attr_ints(node, "strides", ones);
  op->dilation = attr_ints(node, "dilations", ones);
  if (op->stride.size() != spatial || op->dilation.size() != spatial)
    fail("node ", node_label(node), ": strides and dilations need ", spatial, " entries for input ",
         shape_str(x));
  for (size_t i = 0; i < spatial; ++i)
    if (op->kernel[i] > kMaxWindow || op->stride[i] < 1 || op->dilation[i] < 1 ||
        op->stride[i] > kMaxWindow || op->dilation[i] > kMaxWindow)
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
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t in = x[i + 2];
      const int64_t out = (in + op->stride[i] - 1) / op->stride[i];
      const int64_t needed = (out - 1) * op->stride[i] + op->dilation[i] * (op->kernel[i] - 1) + 1;
      const int64_t total = needed > in ? needed - in : 0;
      op->pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      op->pad_end[i] = total - op->pad_begin[i];
    }
  } else if (auto_pad != "VALID") {
    fail("node ", node_label(node), ": unknown auto_pad '", auto_pad, "'");
  }
  Shape out = {x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t o = conv_out(x[i + 2], op->kernel[i], op->stride[i], op->dilation[i],
                               op->pad_begin[i], op->pad_end[i]);
    if (o < 1)
      fail("node ", node_label(node), ": the window (kernel ", op->kernel[i], ", dilation ",
           op->dilation[i], ") is larger than the padded input ", shape_str(x));
    out.push_back(o);
  }
  return out;
}

// x and w of a quantized convolution: rank 3 to 5, equal ranks. A reason or "".
std::string conv_ranks(const Node& node, const Shape& x, const Shape& w) {
  if (x.size() < 3 || x.size() > 5)
    return cat("input rank ", x.size(), " (jetplan handles 1 to 3 spatial dims: rank 3 to 5)");
  if (w.size() != x.size())
    fail("node ", node_label(node), ": shape mismatch: weight ", shape_str(w), " and input ",
         shape_str(x), " differ in rank");
  return "";
}

std::string check_qlinear_conv(Graph& g, Node& node) {
  for (size_t i = 0; i < 8; ++i) input(g, node, i);  // all required but the bias
  const Value& x = input(g, node, 0);
  const Value& w = input(g, node, 3);
  const Value& y_zp = input(g, node, 7);
  if (!is_quantized(x.dtype)) return not_quantized(x, "input");
  if (!is_quantized(w.dtype)) return not_quantized(w, "weight");
  if (!is_quantized(y_zp.dtype)) return not_quantized(y_zp, "output zero point");
  if (std::string r = conv_ranks(node, x.shape, w.shape); !r.empty()) return r;
  const Shape out = conv_window(node, x.shape, w.shape, &node.op);
  const int64_t M = w.shape[0];
  // widen_to below adds values: no reference into g.values is used after it.
  const DataType x_type = x.dtype, w_type = w.dtype, y_type = y_zp.dtype;
  if (std::string r = check_scale_pair(g, node, 1, x_type, 1, "input"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 4, w_type, M, "weight"); !r.empty()) return r;
  if (std::string r = check_scale_pair(g, node, 6, y_type, 1, "output"); !r.empty()) return r;
  for (size_t at : {4, 5})
    if (shape_count(input(g, node, at == 4 ? 5 : 4).shape) == M)
      if (std::string r = widen_to(g, node, at, M); !r.empty()) return r;
  SeqDesc& d = node.op.seq;
  d = SeqDesc{};
  if (has_input(node, 8)) {
    const Value& bias = input(g, node, 8);
    if (bias.dtype != DataType::kInt32)
      return cat("bias '", bias.name, "' is ", dtype_name(bias.dtype), " (ONNX requires int32)");
    if (bias.shape != Shape{M})
      fail("node ", node_label(node), ": shape mismatch: bias '", bias.name, "' ",
           shape_str(bias.shape), " for ", M, " output channels");
    d.has_bias = true;
  }
  node.op.family = fb::OpFamily::QLinearConv;
  set_output_typed(g, node, 0, y_type, out);
  return "";
}

// ConvInteger (opset 10): int32 conv(x - x_zp, w - w_zp), x_zp per tensor, w_zp per tensor or
// per output channel; padding contributes nothing (it is x_zp, as onnxruntime pads).
std::string check_conv_integer(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  const Value& w = input(g, node, 1);
  if (!is_quantized(x.dtype)) return not_quantized(x, "input");
  if (!is_quantized(w.dtype)) return not_quantized(w, "weight");
  if (has_input(node, 2)) check_zero_point_type(node, input(g, node, 2), x.dtype, "input");
  if (has_input(node, 3)) check_zero_point_type(node, input(g, node, 3), w.dtype, "weight");
  if (std::string r = conv_ranks(node, x.shape, w.shape); !r.empty()) return r;
  const Shape out = conv_window(node, x.shape, w.shape, &node.op);
  const int64_t M = w.shape[0];
  if (has_input(node, 2) && shape_count(input(g, node, 2).shape) != 1)
    fail("node ", node_label(node), ": input zero point '", input(g, node, 2).name, "' ",
         shape_str(input(g, node, 2).shape), " must be a scalar");
  if (has_input(node, 3) && shape_count(input(g, node, 3).shape) != 1 &&
      input(g, node, 3).shape != Shape{M})
    fail("node ", node_label(node), ": weight zero point '", input(g, node, 3).name, "' ",
         shape_str(input(g, node, 3).shape), " must be a scalar or [", M, "]");
  std::vector<int64_t> x_zp, w_zp;
  const double x_max = max_offset(x.dtype, known_zero_points(g, node, 2, &x_zp) ? &x_zp : nullptr);
  const int64_t inner = shape_count(w.shape) / M;
  double channel = static_cast<double>(inner) * 255.0;
  if (w.is_constant && known_zero_points(g, node, 3, &w_zp))
    channel = max_channel_sum(read_ints(w), w_zp, inner);
  if (std::string r = exact_in_float(node, x_max * channel); !r.empty()) return r;
  SeqDesc& d = node.op.seq;
  d = SeqDesc{};
  d.integer = SeqDesc::Integer::kConv;
  node.op.family = fb::OpFamily::Dequantize;  // a placeholder: expand_seq replaces the node
  set_output_typed(g, node, 0, DataType::kInt32, out);
  return "";
}

// DynamicQuantizeLinear: one step writing y (uint8), y_scale and y_zero_point (scalars).
std::string check_dynamic_quantize(Graph& g, Node& node) {
  const Value& x = input(g, node, 0);
  if (x.dtype != DataType::kFloat32)
    return cat("input '", x.name, "' is ", dtype_name(x.dtype), " (jetplan quantizes float32)");
  if (node.outputs.size() != 3 || node.outputs[1] < 0 || node.outputs[2] < 0)
    fail("node ", node_label(node), ": DynamicQuantizeLinear has 3 outputs (y, y_scale, "
         "y_zero_point), the node names ", node.outputs.size());
  const Shape xs = x.shape;
  node.op.family = fb::OpFamily::DynamicQuantize;
  node.op.seq = SeqDesc{};
  set_output_typed(g, node, 0, DataType::kUInt8, xs);
  set_output_typed(g, node, 1, DataType::kFloat32, {});
  set_output_typed(g, node, 2, DataType::kUInt8, {});
  return "";
}

struct OpCheck {
  const char* op_type;
  CheckFn check;
  // For SUPPORTED_OPS.md (converter/README.md, "Op tables"): the element types the op's steps
  // take and the restrictions its check enforces, one line each.
  const char* dtypes;
  const char* notes;
};

constexpr const char* kRecurrentTypes = "float32 (sequence_lens int32)";
// Sorted by op type.
constexpr OpCheck kOps[] = {
    {"ConvInteger", check_conv_integer, "int8, uint8 -> int32",
     "1 to 3 spatial dims; w_zero_point per tensor or per output channel; runs as Dequantize + "
     "float32 Conv + Cast: refused where the sums could pass 2^24"},
    {"DequantizeLinear", check_quantize_linear, "int8, uint8 -> float32 (int32 constants)",
     "per tensor or per axis (opset 13); scale and zero point may be computed at run time; "
     "folded on constants"},
    {"DynamicQuantizeLinear", check_dynamic_quantize, "float32 -> uint8",
     "y_scale and y_zero_point from x's range widened to hold 0; round half to even, "
     "saturating"},
    {"GRU", seq::check_rnn, kRecurrentTypes,
     "all directions, layouts, optional inputs and clip; linear_before_reset 0 and 1; every "
     "ONNX activation (with activation_alpha/beta)"},
    {"LSTM", seq::check_rnn, kRecurrentTypes,
     "all directions, layouts, optional inputs (peepholes too) and clip; input_forget; every "
     "ONNX activation (with activation_alpha/beta)"},
    {"MatMulInteger", check_matmul_integer, "int8, uint8 -> int32",
     "zero points per tensor, per row of A, per column of B; batch dims of each operand equal to "
     "the output's or all 1; runs as Dequantize + float32 MatMul + Cast: refused where the sums "
     "could pass 2^24"},
    {"QLinearConv", check_qlinear_conv, "int8, uint8 (bias int32)",
     "1 to 3 spatial dims; w_scale and w_zero_point per tensor or per output channel"},
    {"QLinearMatMul", check_qlinear_matmul, "int8, uint8",
     "A per tensor or per row, B per tensor or per column; batch dims of each operand equal to "
     "the output's or all 1"},
    {"QuantizeLinear", check_quantize_linear, "float32 -> int8, uint8",
     "per tensor or per axis (opset 13); round half to even, saturating; scale and zero point "
     "may be computed at run time; folded on constants"},
    {"RNN", seq::check_rnn, kRecurrentTypes,
     "all directions, layouts, optional inputs and clip; every ONNX activation (with "
     "activation_alpha/beta)"},
};
static_assert(sorted_by_op_type(kOps), "kOps must be sorted by op type");

// ------------------------------------------------------------------------------- expansion

// Value `v` seen with another shape of the same size: a re-described constant, or a Copy step.
int view(Graph& g, int v, const Shape& shape, const std::string& step_name,
         std::vector<Node>* out) {
  if (g.values[v].shape == shape) return v;
  const std::string name = g.values[v].name + ":" + shape_str(shape);
  const DataType dtype = g.values[v].dtype;
  if (g.values[v].is_constant) return new_constant(g, name, dtype, shape, g.values[v].data);
  const int to = new_value(g, name, dtype, shape);
  out->push_back(copy_node(step_name, v, to));
  return to;
}

// QLinearMatMul with 1-D operands: the step multiplies matrices ([1, K] x [K, 1]) and ONNX
// drops the vector dims from the output, so views go around it.
bool expand_qlinear_matmul(Graph& g, Node& node, std::vector<Node>* out) {
  SeqDesc& d = node.op.seq;
  if (!d.a_vector && !d.b_vector) return false;
  const Shape a = g.values[node.inputs[0]].shape, b = g.values[node.inputs[3]].shape;
  if (d.a_vector) node.inputs[0] = view(g, node.inputs[0], {1, a[0]}, node.name + ":A", out);
  if (d.b_vector) node.inputs[3] = view(g, node.inputs[3], {b[0], 1}, node.name + ":B", out);
  const int onnx_out = node.outputs[0];
  Shape step_shape = g.values[onnx_out].shape;
  if (d.a_vector) step_shape.insert(step_shape.end() - (d.b_vector ? 0 : 1), 1);
  if (d.b_vector) step_shape.push_back(1);
  const int tmp = new_value(g, g.values[onnx_out].name + ":" + shape_str(step_shape),
                            g.values[onnx_out].dtype, step_shape);
  d.a_vector = d.b_vector = false;
  node.outputs[0] = tmp;
  const std::string copy_name = node.name + ":Y";
  out->push_back(std::move(node));
  out->push_back(copy_node(copy_name, tmp, onnx_out));
  return true;
}

// Float32 (q - zp) of quantized input `q_at`, exactly (|q - zp| <= 255): a folded constant
// when q and its zero point are constants, else a Dequantize step with unit scales. The zero
// point (input `zp_at`, maybe absent) has 1 entry or `count` along `axis` of q.
int dequantize_exact(Graph& g, const Node& node, size_t q_at, size_t zp_at, int64_t count,
                     int64_t axis, const std::string& step_name, std::vector<Node>* out) {
  const int q = node.inputs[q_at];
  const int zp = has_input(node, zp_at) ? node.inputs[zp_at] : -1;
  const Shape shape = g.values[q].shape;
  const std::string name = g.values[q].name + ":float";
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  if (g.values[q].is_constant && (zp < 0 || g.values[zp].is_constant)) {
    const std::vector<int64_t> values = read_ints(g.values[q]);
    const std::vector<int64_t> zps = zp < 0 ? std::vector<int64_t>{0} : read_ints(g.values[zp]);
    std::vector<double> exact(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      exact[i] = static_cast<double>(
          values[i] - zps[zps.size() == 1 ? 0 : (static_cast<int64_t>(i) / inner) % count]);
    return new_constant(g, name, DataType::kFloat32, shape,
                        write_doubles(DataType::kFloat32, exact));
  }
  const int64_t scales = zp < 0 ? 1 : shape_count(g.values[zp].shape);
  const int ones = new_constant(
      g, step_name + ":unit_scale", DataType::kFloat32, {scales},
      write_doubles(DataType::kFloat32, std::vector<double>(static_cast<size_t>(scales), 1.0)));
  Node dq;
  dq.name = step_name;
  dq.op_type = "DequantizeLinear";
  dq.inputs = {q, ones};
  if (zp >= 0) dq.inputs.push_back(zp);
  dq.outputs = {new_value(g, name, DataType::kFloat32, shape)};
  dq.op.resolved = true;
  dq.op.family = fb::OpFamily::Dequantize;
  dq.op.seq.has_zero_point = zp >= 0;
  dq.op.seq.per_axis = scales != 1;
  dq.op.seq.axis = static_cast<int32_t>(axis);
  out->push_back(std::move(dq));
  return out->back().outputs[0];
}

// The int32 result: a Cast of the float32 step output `value` into ONNX's output, through a
// view when the step's shape is not ONNX's.
void cast_to_int32(Graph& g, const std::string& node_name, int value, int onnx_out,
                   std::vector<Node>* out) {
  Node cast;
  cast.name = node_name + ":int32";
  cast.op_type = "Cast";
  cast.inputs = {value};
  cast.op.resolved = true;
  cast.op.family = fb::OpFamily::Cast;
  const Shape step_shape = g.values[value].shape;
  if (step_shape == g.values[onnx_out].shape) {
    cast.outputs = {onnx_out};
    out->push_back(std::move(cast));
    return;
  }
  const int tmp = new_value(g, g.values[onnx_out].name + ":" + shape_str(step_shape),
                            DataType::kInt32, step_shape);
  cast.outputs = {tmp};
  out->push_back(std::move(cast));
  out->push_back(copy_node(node_name + ":Y", tmp, onnx_out));
}

// MatMulInteger: Dequantize A and B exactly, a float32 Gemm (double accumulation, one rounding
// to float32, exact below 2^24 as the check ensured), a Cast to int32.
void expand_matmul_integer(Graph& g, Node& node, std::vector<Node>* out) {
  const Shape a = g.values[node.inputs[0]].shape, b = g.values[node.inputs[1]].shape;
  MatMulShapes mm;
  matmul_shapes(node, a, b, &mm);
  const int64_t a_count = has_input(node, 2) ? shape_count(g.values[node.inputs[2]].shape) : 1;
  const int64_t b_count = has_input(node, 3) ? shape_count(g.values[node.inputs[3]].shape) : 1;
  // Per-row zero points run along A's second last axis, per-column ones along B's last.
  int fa = dequantize_exact(g, node, 0, 2, a_count,
                            std::max<int64_t>(0, static_cast<int64_t>(a.size()) - 2),
                            node.name + ":A_dequantize", out);
  int fb_ = dequantize_exact(g, node, 1, 3, b_count, static_cast<int64_t>(b.size()) - 1,
                             node.name + ":B_dequantize", out);
  // Operands as matrices with all the output's batch dims, or none (a matrix for every batch).
  auto fit = [&](Shape m) {
    const Shape own(m.begin(), m.end() - 2);
    if (shape_count(own) == 1)
      m.erase(m.begin(), m.end() - 2);
    else
      m.insert(m.begin(), mm.batch.size() - own.size(), 1);
    return m;
  };
  fa = view(g, fa, fit(mm.a), node.name + ":A", out);
  fb_ = view(g, fb_, fit(mm.b), node.name + ":B", out);
  Node gemm;
  gemm.name = node.name;
  gemm.op_type = "MatMul";
  gemm.inputs = {fa, fb_};
  gemm.outputs = {
      new_value(g, g.values[node.outputs[0]].name + ":float", DataType::kFloat32, mm.y_step)};
  gemm.op.resolved = true;
  gemm.op.family = fb::OpFamily::Gemm;
  const int product = gemm.outputs[0];
  out->push_back(std::move(gemm));
  cast_to_int32(g, node.name, product, node.outputs[0], out);
}

// ConvInteger: Dequantize x and w exactly, a float32 Conv, a Cast to int32.
void expand_conv_integer(Graph& g, Node& node, std::vector<Node>* out) {
  const int64_t w_count = has_input(node, 3) ? shape_count(g.values[node.inputs[3]].shape) : 1;
  const int fx = dequantize_exact(g, node, 0, 2, 1, 0, node.name + ":x_dequantize", out);
  const int fw = dequantize_exact(g, node, 1, 3, w_count, 0, node.name + ":w_dequantize", out);
  Node conv;
  conv.name = node.name;
  conv.op_type = "Conv";
  conv.inputs = {fx, fw};
  conv.outputs = {new_value(g, g.values[node.outputs[0]].name + ":float", DataType::kFloat32,
                            g.values[node.outputs[0]].shape)};
  conv.op = node.op;  // the window
  conv.op.family = fb::OpFamily::Conv;
  conv.op.seq = SeqDesc{};
  const int product = conv.outputs[0];
  out->push_back(std::move(conv));
  cast_to_int32(g, node.name, product, node.outputs[0], out);
}

}  // namespace

CheckFn find_check_seq(const std::string& op_type) {
  for (const OpCheck& e : kOps)
    if (op_type == e.op_type) return e.check;
  return nullptr;
}

bool find_doc_seq(const std::string& op_type, OpDoc* doc) {
  for (const OpCheck& e : kOps)
    if (op_type == e.op_type) {
      *doc = {e.dtypes, e.notes};
      return true;
    }
  return false;
}

bool expand_seq(Graph& g, Node& node, std::vector<Node>* out) {
  switch (node.op.seq.integer) {
    case SeqDesc::Integer::kMatMul:
      expand_matmul_integer(g, node, out);
      return true;
    case SeqDesc::Integer::kConv:
      expand_conv_integer(g, node, out);
      return true;
    case SeqDesc::Integer::kNone:
      break;
  }
  if (node.op.family == fb::OpFamily::QLinearMatMul) return expand_qlinear_matmul(g, node, out);
  return false;
}

}  // namespace jetplan::converter
