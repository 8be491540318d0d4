// What the quantized families share (see quantized.h), and the check of QuantizeLinear and
// DequantizeLinear, folded on constants with the CPU kernels.
#include "converter/src/ops/quantized.h"

#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/lower/lower.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"
#include "converter/src/ops/params_table.h"
#include "kernels/kernels.h"

namespace jetplan::converter::ops {

bool is_quantized(DataType t) { return t == DataType::kInt8 || t == DataType::kUInt8; }

std::string not_quantized(const Value& v, const char* role) {
  return cat(role, " '", v.name, "' is ", dtype_name(v.dtype),
             " (jetplan's quantized ops take int8 and uint8)");
}

std::string quantized_reason(std::initializer_list<QuantizedOperand> operands) {
  for (const QuantizedOperand& o : operands)
    if (!is_quantized(o.v.dtype)) return not_quantized(o.v, o.role);
  return "";
}

QLinearOperands qlinear_operands(const Graph& g, const Node& node) {
  for (size_t i = 0; i < 8; ++i) input(g, node, i);
  return {input(g, node, 0), input(g, node, 3), input(g, node, 7)};
}

void check_zero_point_type(const Node& node, const Value& zp, DataType want, const char* role) {
  if (zp.dtype != want)
    fail("node ", node_label(node), ": ", role, " zero point '", zp.name, "' is ",
         dtype_name(zp.dtype), " but its tensor is ", dtype_name(want));
}

int64_t scale_entries(const Node& node, const Value& v, const char* role) {
  if (v.shape.size() > 1)
    fail("node ", node_label(node), ": ", role, " '", v.name, "' is ", shape_str(v.shape),
         " (a scalar or 1-D tensor is expected)");
  return shape_count(v.shape);
}

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

namespace {

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

}  // namespace

// The attributes of the definitions past opset 17: block_size (21), output_dtype (Quantize 21,
// Dequantize 23) and precision (Quantize 23). Their defaults, and the values that mean the same,
// read as before; QuantizeLinear without a zero point quantizes to output_dtype, with one to
// the zero point's type, which output_dtype must then be. *qtype: the quantized type so far.
std::string newer_quantize_attrs(const Node& node, bool has_zero_point, DataType* qtype) {
  const bool quantize = node.op_type == "QuantizeLinear";
  if (attr_int(node, "block_size", 0) != 0)
    return "blocked quantization (block_size, opset 21) is not supported";
  const auto out = static_cast<DataType>(attr_int(node, "output_dtype", 0));
  if (out != DataType::kUndefined) {
    if (!quantize && out != DataType::kFloat32)
      return cat("output_dtype ", dtype_name(out), " is not supported (jetplan dequantizes to "
                 "float32)");
    if (quantize && out != DataType::kInt8 && out != DataType::kUInt8)
      return cat("output_dtype ", dtype_name(out), " is not supported (jetplan quantizes to int8 "
                 "and uint8)");
    if (quantize && has_zero_point && out != *qtype)
      fail("node ", node_label(node), ": output_dtype is ", dtype_name(out),
           " but the zero point is ", dtype_name(*qtype));
    if (quantize) *qtype = out;
  }
  const auto precision = static_cast<DataType>(attr_int(node, "precision", 0));
  if (precision != DataType::kUndefined && precision != DataType::kFloat32)
    return cat("precision ", dtype_name(precision), " is not supported (jetplan divides in float32)");
  return "";
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
  QuantDesc& d = node.op.quant;
  d = QuantDesc{};
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
  if (std::string r = newer_quantize_attrs(node, d.has_zero_point, &qtype); !r.empty()) return r;
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

StepParamsOffset serialize_quantize_params(flatbuffers::FlatBufferBuilder& fbb,
                                           const DraftStep& s) {
  const QuantDesc& d = s.op.quant;
  const auto p = fb::CreateQuantizeParams(fbb, d.axis, d.per_axis, d.has_zero_point, d.layout);
  return params(p);
}

}  // namespace jetplan::converter::ops
