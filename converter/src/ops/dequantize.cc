// The Dequantize family: DequantizeLinear (check_quantize_linear, quantized.cc; folded on
// constants), and the integer products MatMulInteger and ConvInteger, which resolve to a
// Dequantize placeholder that the family's expansion replaces by Dequantize steps (or folded
// constants) with unit scales, a float32 Gemm or Conv, and a Cast to int32.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/quantized.h"
#include "converter/src/ops/registry.h"
#include "converter/src/ops/steps.h"
#include "converter/src/ops/window.h"

namespace jetplan::converter::ops {

namespace {

// float32 holds every integer up to 2^24 exactly: the bound on MatMulInteger and ConvInteger
// sums, which run through float32 steps.
constexpr double kExactFloatInteger = 16777216.0;

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

// MatMulInteger's and ConvInteger's operands (inputs 0 and 1, `a_role` and `b_role`): "" when
// both are int8 or uint8, else the reason; their optional zero points (inputs 2 and 3) must be
// of the same types (ConvertError otherwise).
std::string integer_operands_reason(const Graph& g, const Node& node, const char* a_role,
                                    const char* b_role) {
  const Value& a = input(g, node, 0);
  const Value& b = input(g, node, 1);
  if (std::string r = quantized_reason({{a, a_role}, {b, b_role}}); !r.empty()) return r;
  if (has_input(node, 2)) check_zero_point_type(node, input(g, node, 2), a.dtype, a_role);
  if (has_input(node, 3)) check_zero_point_type(node, input(g, node, 3), b.dtype, b_role);
  return "";
}

// MatMulInteger (opset 10): int32 (A - a_zp) x (B - b_zp), a_zp per tensor or per row, b_zp
// per tensor or per column.
std::string check_matmul_integer(Graph& g, Node& node) {
  if (std::string r = integer_operands_reason(g, node, "A", "B"); !r.empty()) return r;
  const Value& a = input(g, node, 0);
  const Value& b = input(g, node, 1);
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
  QuantDesc& d = node.op.quant;
  d = QuantDesc{};
  d.integer = QuantDesc::Integer::kMatMul;
  d.a_vector = mm.a_vector;
  d.b_vector = mm.b_vector;
  node.op.family = fb::OpFamily::Dequantize;  // a placeholder: expand_integer_product replaces it
  set_output_typed(g, node, 0, DataType::kInt32, mm.y);
  return "";
}

// ConvInteger (opset 10): int32 conv(x - x_zp, w - w_zp), x_zp per tensor, w_zp per tensor or
// per output channel; padding contributes nothing (it is x_zp, as onnxruntime pads).
std::string check_conv_integer(Graph& g, Node& node) {
  if (std::string r = integer_operands_reason(g, node, "input", "weight"); !r.empty()) return r;
  const Value& x = input(g, node, 0);
  const Value& w = input(g, node, 1);
  if (std::string r = spatial_rank_reason(x.shape); !r.empty()) return r;
  check_weight_rank(node, x.shape, w.shape);
  const Shape out = integer_conv_window(node, x.shape, w.shape, &node.op);
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
  QuantDesc& d = node.op.quant;
  d = QuantDesc{};
  d.integer = QuantDesc::Integer::kConv;
  node.op.family = fb::OpFamily::Dequantize;  // a placeholder: expand_integer_product replaces it
  set_output_typed(g, node, 0, DataType::kInt32, out);
  return "";
}

// ---- expansion

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
  dq.op.quant.has_zero_point = zp >= 0;
  dq.op.quant.per_axis = scales != 1;
  dq.op.quant.axis = static_cast<int32_t>(axis);
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
  fa = view_of(g, fa, fit(mm.a), node.name + ":A", out);
  fb_ = view_of(g, fb_, fit(mm.b), node.name + ":B", out);
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
  conv.op.quant = QuantDesc{};
  const int product = conv.outputs[0];
  out->push_back(std::move(conv));
  cast_to_int32(g, node.name, product, node.outputs[0], out);
}

// MatMulInteger and ConvInteger placeholders become their steps.
bool expand_integer_product(Graph& g, Node& node, std::vector<Node>* out) {
  switch (node.op.quant.integer) {
    case QuantDesc::Integer::kMatMul:
      expand_matmul_integer(g, node, out);
      return true;
    case QuantDesc::Integer::kConv:
      expand_conv_integer(g, node, out);
      return true;
    case QuantDesc::Integer::kNone:
      break;
  }
  return false;
}

constexpr OpRow kRows[] = {
    {"ConvInteger", check_conv_integer, "int8, uint8 -> int32",
     "1 to 3 spatial dims; w_zero_point per tensor or per output channel; runs as Dequantize + "
     "float32 Conv + Cast: refused where the sums could pass 2^24"},
    {"DequantizeLinear", check_quantize_linear, "int8, uint8 -> float32 (int32 constants)",
     "per tensor or per axis (opset 13); scale and zero point may be computed at run time; "
     "folded on constants; output_dtype float32 (opset 23)",
     23},
    {"MatMulInteger", check_matmul_integer, "int8, uint8 -> int32",
     "zero points per tensor, per row of A, per column of B; batch dims of each operand equal to "
     "the output's or all 1; runs as Dequantize + float32 MatMul + Cast: refused where the sums "
     "could pass 2^24"},
};

}  // namespace

const FamilyRules dequantize_rules = {serialize_quantize_params, expand_integer_product,
                                      rows_of(kRows)};

}  // namespace jetplan::converter::ops
