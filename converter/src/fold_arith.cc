// Numeric constant folding. Floating types compute in double and round once to the output type;
// integer types compute in int64 (ONNX shape arithmetic is int64).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "converter/src/error.h"
#include "converter/src/fold_eval.h"
#include "converter/src/shape_ops.h"

namespace jetplan::converter::fold {
namespace {

bool scalar_like(const Value& v) { return shape_count(v.shape) == 1; }

double binary_double(const std::string& op, double x, double y) {
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Div") return x / y;
  if (op == "Pow") return std::pow(x, y);
  if (op == "Max") return std::fmax(x, y);
  return std::fmin(x, y);  // Min
}

// Integer division truncates toward zero, as C and onnxruntime do.
int64_t binary_int(const Node& node, const std::string& op, int64_t x, int64_t y) {
  if (op == "Add") return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  if (op == "Sub") return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
  if (op == "Mul") return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  if (op == "Div") {
    if (y == 0) fail("node ", node_label(node), ": integer division by zero in a constant");
    if (y == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    return x / y;
  }
  if (op == "Pow")
    return static_cast<int64_t>(std::pow(static_cast<double>(x), static_cast<double>(y)));
  if (op == "Max") return std::max(x, y);
  return std::min(x, y);  // Min
}

}  // namespace

bool eval_cast(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const auto to = static_cast<DataType>(attr_int(a.node, "to", 0));
  if (!is_numeric(x.dtype) || !is_numeric(to)) return false;
  TensorData t{to, x.shape, {}};
  t.bytes =
      is_floating(x.dtype) ? write_doubles(to, read_doubles(x)) : write_ints(to, read_ints(x));
  out->push_back(std::move(t));
  return true;
}

bool eval_range(const Args& a, std::vector<TensorData>* out) {
  const Value &start = *a.in[0], &limit = *a.in[1], &delta = *a.in[2];
  if (!is_numeric(start.dtype) || !scalar_like(start) || !scalar_like(limit) || !scalar_like(delta))
    return false;
  const DataType dtype = start.dtype;
  const double s = read_doubles(start)[0], l = read_doubles(limit)[0], d = read_doubles(delta)[0];
  if (d == 0) fail("node ", node_label(a.node), ": Range with delta 0");
  const double steps = std::ceil((l - s) / d);
  const int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
  if (!fits({count}, dtype)) return false;
  TensorData t{dtype, {count}, {}};
  if (is_floating(dtype)) {
    std::vector<double> v(count);
    for (int64_t i = 0; i < count; ++i) v[i] = s + static_cast<double>(i) * d;
    t.bytes = write_doubles(dtype, v);
  } else {
    const int64_t si = read_ints(start)[0], di = read_ints(delta)[0];
    std::vector<int64_t> v(count);
    for (int64_t i = 0; i < count; ++i) v[i] = si + i * di;
    t.bytes = write_ints(dtype, v);
  }
  out->push_back(std::move(t));
  return true;
}

bool eval_binary(const Args& a, std::vector<TensorData>* out) {
  const std::string& op = a.node.op_type;
  if (a.in.empty()) return false;
  for (const Value* v : a.in)
    if (v == nullptr || !is_numeric(v->dtype)) return false;
  // Max and Min are variadic: fold left to right.
  const DataType dtype = a.in[0]->dtype;
  Shape shape = a.in[0]->shape;
  for (size_t i = 1; i < a.in.size(); ++i) shape = broadcast_or_fail(a.node, shape, a.in[i]->shape);
  if (!fits(shape, dtype)) return false;
  const int64_t count = shape_count(shape);
  const std::vector<int64_t> first = broadcast_index(a.in[0]->shape, shape);
  TensorData t{dtype, shape, {}};
  if (is_floating(dtype)) {
    const std::vector<double> x0 = read_doubles(*a.in[0]);
    std::vector<double> acc(count);
    for (int64_t k = 0; k < count; ++k) acc[k] = x0[first[k]];
    for (size_t i = 1; i < a.in.size(); ++i) {
      const std::vector<double> xi = read_doubles(*a.in[i]);
      const std::vector<int64_t> idx = broadcast_index(a.in[i]->shape, shape);
      for (int64_t k = 0; k < count; ++k) acc[k] = binary_double(op, acc[k], xi[idx[k]]);
    }
    t.bytes = write_doubles(dtype, acc);
  } else {
    const std::vector<int64_t> x0 = read_ints(*a.in[0]);
    std::vector<int64_t> acc(count);
    for (int64_t k = 0; k < count; ++k) acc[k] = x0[first[k]];
    for (size_t i = 1; i < a.in.size(); ++i) {
      const std::vector<int64_t> xi = read_ints(*a.in[i]);
      const std::vector<int64_t> idx = broadcast_index(a.in[i]->shape, shape);
      for (int64_t k = 0; k < count; ++k) acc[k] = binary_int(a.node, op, acc[k], xi[idx[k]]);
    }
    t.bytes = write_ints(dtype, acc);
  }
  out->push_back(std::move(t));
  return true;
}

bool eval_unary(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const std::string& op = a.node.op_type;
  if (!is_numeric(x.dtype)) return false;
  if (!is_floating(x.dtype)) {
    if (op != "Neg" && op != "Abs" && op != "Relu") return false;
    std::vector<int64_t> v = read_ints(x);
    for (int64_t& e : v) e = op == "Neg" ? -e : op == "Abs" ? std::abs(e) : std::max<int64_t>(e, 0);
    out->push_back({x.dtype, x.shape, write_ints(x.dtype, v)});
    return true;
  }
  std::vector<double> v = read_doubles(x);
  for (double& e : v) {
    if (op == "Neg")
      e = -e;
    else if (op == "Abs")
      e = std::fabs(e);
    else if (op == "Sqrt")
      e = std::sqrt(e);
    else if (op == "Reciprocal")
      e = 1.0 / e;
    else if (op == "Exp")
      e = std::exp(e);
    else if (op == "Log")
      e = std::log(e);
    else if (op == "Floor")
      e = std::floor(e);
    else if (op == "Ceil")
      e = std::ceil(e);
    else if (op == "Relu")
      e = e > 0 ? e : 0;
    else if (op == "Sigmoid")
      e = 1.0 / (1.0 + std::exp(-e));
    else if (op == "Tanh")
      e = std::tanh(e);
    else
      return false;
  }
  out->push_back({x.dtype, x.shape, write_doubles(x.dtype, v)});
  return true;
}

}  // namespace jetplan::converter::fold
