// Numeric constant folding. Shape arithmetic (int64) and the float Binary ops compute in int64 or
// double and round once to the output type. The tensor ops' math (unary math, comparisons,
// logic, Mod, Cast) runs through the CPU reference kernels with the dtypes the plan would use,
// so a folded node gives the bits its step would; float64 unary math, which the kernels lack,
// computes in double.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/ir/shape_ops.h"
#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"
#include "kernels/kernels.h"

namespace jetplan::converter::fold {
namespace {

bool scalar_like(const Value& v) { return shape_count(v.shape) == 1; }

double binary_double(const std::string& op, double x, double y) {
  if (op == "Add" || op == "Sum" || op == "Mean") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Div") return x / y;
  if (op == "Pow") return std::pow(x, y);
  // Max and Min propagate NaN from either side, as the Binary kernel (and numpy) do.
  if (std::isnan(x) || std::isnan(y)) return x + y;
  if (op == "Max") return std::max(x, y);
  return std::min(x, y);  // Min
}

// Integer division truncates toward zero, as C and onnxruntime do.
int64_t binary_int(const Node& node, const std::string& op, int64_t x, int64_t y) {
  if (op == "Add" || op == "Sum")
    return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
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

// Left fold of `op` over every input with numpy broadcasting; Mean divides by the count.
bool fold_chain(const Args& a, const std::string& op, std::vector<TensorData>* out) {
  if (a.in.empty()) return false;
  for (const Value* v : a.in)
    if (v == nullptr || !is_numeric(v->dtype)) return false;
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
    if (op == "Mean")
      for (double& v : acc) v /= static_cast<double>(a.in.size());
    t.bytes = write_doubles(dtype, acc);
  } else {
    if (op == "Mean") return false;  // ONNX Mean is float only
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

TensorData data_of(const Value& v) { return {v.dtype, v.shape, v.data}; }

// Unary math in double, for float64 constants (the kernels compute float32).
bool unary_double(kernels::UnaryOp op, double x, double* y) {
  using kernels::UnaryOp;
  const auto softplus = [](double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); };
  switch (op) {
    case UnaryOp::kAbs: *y = std::fabs(x); return true;
    case UnaryOp::kNeg: *y = -x; return true;
    case UnaryOp::kExp: *y = std::exp(x); return true;
    case UnaryOp::kLog: *y = std::log(x); return true;
    case UnaryOp::kSqrt: *y = std::sqrt(x); return true;
    case UnaryOp::kReciprocal: *y = 1.0 / x; return true;
    case UnaryOp::kFloor: *y = std::floor(x); return true;
    case UnaryOp::kCeil: *y = std::ceil(x); return true;
    case UnaryOp::kRound:
      *y = std::fabs(x - std::trunc(x)) == 0.5 ? 2.0 * std::round(0.5 * x) : std::round(x);
      return true;
    case UnaryOp::kSin: *y = std::sin(x); return true;
    case UnaryOp::kCos: *y = std::cos(x); return true;
    case UnaryOp::kTan: *y = std::tan(x); return true;
    case UnaryOp::kAsin: *y = std::asin(x); return true;
    case UnaryOp::kAcos: *y = std::acos(x); return true;
    case UnaryOp::kAtan: *y = std::atan(x); return true;
    case UnaryOp::kSinh: *y = std::sinh(x); return true;
    case UnaryOp::kCosh: *y = std::cosh(x); return true;
    case UnaryOp::kAsinh: *y = std::asinh(x); return true;
    case UnaryOp::kAcosh: *y = std::acosh(x); return true;
    case UnaryOp::kAtanh: *y = std::atanh(x); return true;
    case UnaryOp::kErf: *y = std::erf(x); return true;
    case UnaryOp::kSign: *y = x > 0 ? 1.0 : (x < 0 ? -1.0 : x); return true;
    case UnaryOp::kSoftsign:
      *y = std::isinf(x) ? std::copysign(1.0, x) : x / (1.0 + std::fabs(x));
      return true;
    case UnaryOp::kSoftplus: *y = softplus(x); return true;
    case UnaryOp::kMish: {
      const double t = std::tanh(softplus(x));
      *y = t == 0 ? std::copysign(0.0, x) : x * t;
      return true;
    }
    case UnaryOp::kGeluTanh:
    case UnaryOp::kIsNaN:
    case UnaryOp::kIsInf:
    case UnaryOp::kIsPosInf:
    case UnaryOp::kIsNegInf:
    case UnaryOp::kNot:
      return false;
  }
  return false;
}

// The kernels' rank and output dims of `shape` (a scalar as [1]).
template <typename Params>
void set_out_dims(const Shape& shape, Params* p) {
  p->rank = shape.empty() ? 1 : static_cast<int32_t>(shape.size());
  for (int32_t i = 0; i < p->rank; ++i) p->out_dims[i] = shape.empty() ? 1 : shape[i];
}

// The kernels' per-dim strides of an operand right-aligned to `out` (0 broadcasts).
void operand_strides(const Shape& in, int32_t rank, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    const int64_t ti = i - (rank - static_cast<int64_t>(in.size()));
    const int64_t dim = ti >= 0 ? in[ti] : 1;
    strides[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
}

}  // namespace

bool kernel_dtype(DataType dtype, kernels::DType* out) {
  // kernels::DType numbers its values as fb::DType (runtime/src/prepare/prepare_util.cc
  // static_asserts every one).
  static_assert(kernels::kDTypeCount == static_cast<int>(fb::DType::MAX) + 1);
  fb::DType t;
  if (!to_plan_dtype(dtype, &t)) return false;
  *out = static_cast<kernels::DType>(t);
  return true;
}

TensorData cast_data(const TensorData& data, DataType to) {
  kernels::CastParams p;
  if (!kernel_dtype(data.dtype, &p.from) || !kernel_dtype(to, &p.to))
    fail("internal error: cast of ", dtype_name(data.dtype), " to ", dtype_name(to));
  p.count = shape_count(data.shape);
  TensorData t{to, data.shape, std::vector<uint8_t>(p.count * dtype_size(to))};
  if (p.count > 0) kernels::cpu::cast(p, data.bytes.data(), t.bytes.data());
  return t;
}

std::vector<double> numbers(DataType dtype, const std::vector<uint8_t>& bytes) {
  if (dtype != DataType::kFloat16 && dtype != DataType::kBFloat16)
    return read_doubles(TensorData{dtype, {}, bytes});
  std::vector<double> v(bytes.size() / 2);
  for (size_t i = 0; i < v.size(); ++i) {
    const auto bits = static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
    v[i] = dtype == DataType::kFloat16 ? kernels::half_to_double(bits)
                                       : static_cast<double>(kernels::bfloat16_to_float(bits));
  }
  return v;
}

namespace {

// The dtype the kernel of `op` computes `dtype` in, by its `supported` table: dtype itself, else
// float32 for float16 and int32 for 8-bit integers; kUndefined when none.
template <typename Op>
DataType compute_dtype(Op op, DataType dtype, bool (*supported)(Op, kernels::DType)) {
  kernels::DType k;
  if (!kernel_dtype(dtype, &k)) return DataType::kUndefined;
  if (supported(op, k)) return dtype;
  if (dtype == DataType::kFloat16 && supported(op, kernels::DType::kFloat32))
    return DataType::kFloat32;
  if ((dtype == DataType::kInt8 || dtype == DataType::kUInt8) &&
      supported(op, kernels::DType::kInt32))
    return DataType::kInt32;
  return DataType::kUndefined;
}

// The op of `type` in a name table; false when it has none.
template <typename Op, size_t N>
bool op_named(const std::pair<const char*, Op> (&names)[N], const std::string& type, Op* op) {
  for (const auto& [name, value] : names) {
    if (type == name) {
      *op = value;
      return true;
    }
  }
  return false;
}

}  // namespace

DataType unary_compute_dtype(kernels::UnaryOp op, DataType dtype) {
  return compute_dtype(op, dtype, kernels::unary_supported);
}

DataType elementwise_compute_dtype(kernels::ElementwiseOp op, DataType dtype) {
  return compute_dtype(op, dtype, kernels::elementwise_supported);
}

bool unary_op_of(const Node& node, kernels::UnaryOp* op) {
  using kernels::UnaryOp;
  static const std::pair<const char*, UnaryOp> kNames[] = {
      {"Abs", UnaryOp::kAbs},         {"Acos", UnaryOp::kAcos},
      {"Acosh", UnaryOp::kAcosh},     {"Asin", UnaryOp::kAsin},
      {"Asinh", UnaryOp::kAsinh},     {"Atan", UnaryOp::kAtan},
      {"Atanh", UnaryOp::kAtanh},     {"Ceil", UnaryOp::kCeil},
      {"Cos", UnaryOp::kCos},         {"Cosh", UnaryOp::kCosh},
      {"Erf", UnaryOp::kErf},         {"Exp", UnaryOp::kExp},
      {"Floor", UnaryOp::kFloor},     {"IsNaN", UnaryOp::kIsNaN},
      {"Log", UnaryOp::kLog},         {"Mish", UnaryOp::kMish},
      {"Neg", UnaryOp::kNeg},         {"Not", UnaryOp::kNot},
      {"Reciprocal", UnaryOp::kReciprocal}, {"Round", UnaryOp::kRound},
      {"Sign", UnaryOp::kSign},       {"Sin", UnaryOp::kSin},
      {"Sinh", UnaryOp::kSinh},       {"Softplus", UnaryOp::kSoftplus},
      {"Softsign", UnaryOp::kSoftsign}, {"Sqrt", UnaryOp::kSqrt},
      {"Tan", UnaryOp::kTan},
  };
  const std::string& type = node.op_type;
  if (type == "IsInf") {
    const bool pos = attr_int(node, "detect_positive", 1) != 0;
    const bool neg = attr_int(node, "detect_negative", 1) != 0;
    if (!pos && !neg) return false;
    *op = pos && neg ? UnaryOp::kIsInf : pos ? UnaryOp::kIsPosInf : UnaryOp::kIsNegInf;
    return true;
  }
  if (type == "Gelu") {  // opset 20; the erf form is the Activation family's
    if (attr_string(node, "approximate", "none") != "tanh") return false;
    *op = UnaryOp::kGeluTanh;
    return true;
  }
  return op_named(kNames, type, op);
}

bool elementwise_op_of(const Node& node, kernels::ElementwiseOp* op) {
  using kernels::ElementwiseOp;
  static const std::pair<const char*, ElementwiseOp> kNames[] = {
      {"Add", ElementwiseOp::kAdd},
      {"And", ElementwiseOp::kAnd},
      {"BitwiseAnd", ElementwiseOp::kBitAnd},
      {"BitwiseOr", ElementwiseOp::kBitOr},
      {"BitwiseXor", ElementwiseOp::kBitXor},
      {"Div", ElementwiseOp::kDiv},
      {"Equal", ElementwiseOp::kEqual},
      {"Greater", ElementwiseOp::kGreater},
      {"GreaterOrEqual", ElementwiseOp::kGreaterOrEqual},
      {"Less", ElementwiseOp::kLess},
      {"LessOrEqual", ElementwiseOp::kLessOrEqual},
      {"Max", ElementwiseOp::kMax},
      {"Min", ElementwiseOp::kMin},
      {"Mul", ElementwiseOp::kMul},
      {"Or", ElementwiseOp::kOr},
      {"Sub", ElementwiseOp::kSub},
      {"Sum", ElementwiseOp::kAdd},
      {"Xor", ElementwiseOp::kXor},
  };
  if (node.op_type == "Mod") {
    *op = attr_int(node, "fmod", 0) != 0 ? ElementwiseOp::kFMod : ElementwiseOp::kMod;
    return true;
  }
  if (node.op_type == "BitShift") {  // check_bit_shift has read the direction
    *op = attr_string(node, "direction", "") == "LEFT" ? ElementwiseOp::kShiftLeft
                                                       : ElementwiseOp::kShiftRight;
    return true;
  }
  return op_named(kNames, node.op_type, op);
}

bool eval_cast(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  DataType to;
  if (a.node.op_type == "CastLike") {
    if (a.in.size() < 2 || a.in[1] == nullptr) return false;
    to = a.in[1]->dtype;
  } else {
    to = static_cast<DataType>(attr_int(a.node, "to", 0));
  }
  kernels::DType unused;
  if (kernel_dtype(x.dtype, &unused) && kernel_dtype(to, &unused)) {
    out->push_back(cast_data(data_of(x), to));
    return true;
  }
  // Types a plan cannot hold (int16, uint32, ...) may still feed shape arithmetic.
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

// HannWindow, HammingWindow and BlackmanWindow (opset 17) of a constant size: the cosine sums
// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1, in double, as
// ONNX's reference computes them, then written in output_datatype.
bool eval_window(const Args& a, std::vector<TensorData>* out) {
  const Value& size = *a.in[0];
  if (!is_numeric(size.dtype) || !scalar_like(size)) return false;
  const int64_t n = read_ints(size)[0];
  if (n < 0) fail("node ", node_label(a.node), ": window size ", n, " is negative");
  const DataType dtype = static_cast<DataType>(attr_int(a.node, "output_datatype", 1));
  if (!is_numeric(dtype) || !fits({n}, dtype)) return false;
  const std::string& op = a.node.op_type;
  const double a0 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 25.0 / 46.0 : 0.42;
  const double a1 = op == "BlackmanWindow" ? 0.5 : 1.0 - a0;
  const double a2 = op == "BlackmanWindow" ? 0.08 : 0.0;
  const double N = static_cast<double>(attr_int(a.node, "periodic", 1) != 0 ? n : n - 1);
  const double pi = 3.14159265358979323846;
  std::vector<double> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double t = 2.0 * pi * static_cast<double>(i) / N;
    w[static_cast<size_t>(i)] = a0 - a1 * std::cos(t) + a2 * std::cos(2.0 * t);
  }
  out->push_back(TensorData{dtype, {n}, write_doubles(dtype, w)});
  return true;
}

// MelWeightMatrix (opset 17) of constant inputs: [dft_length / 2 + 1, num_mel_bins] triangles
// between num_mel_bins + 2 points spaced evenly on the mel scale, computed as ONNX's reference
// computes them (its mel step divides by num_mel_bins + 2; the points floor to spectrogram bins).
bool eval_mel_weight_matrix(const Args& a, std::vector<TensorData>* out) {
  for (const Value* v : a.in)
    if (v == nullptr || !is_numeric(v->dtype) || !scalar_like(*v)) return false;
  const int64_t mels = read_ints(*a.in[0])[0], dft = read_ints(*a.in[1])[0];
  const int64_t rate = read_ints(*a.in[2])[0];
  const double lower = read_doubles(*a.in[3])[0], upper = read_doubles(*a.in[4])[0];
  const DataType dtype = static_cast<DataType>(attr_int(a.node, "output_datatype", 1));
  const int64_t bins = dft / 2 + 1;
  if (mels < 1 || dft < 1 || rate < 1)
    fail("node ", node_label(a.node), ": num_mel_bins, dft_length and sample_rate must be positive");
  if (!is_numeric(dtype) || !fits({bins, mels}, dtype)) return false;
  const auto mel = [](double hz) { return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0); };
  const double low = mel(lower), step = (mel(upper) - low) / static_cast<double>(mels + 2);
  std::vector<int64_t> point(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * std::expm1((static_cast<double>(i) * step + low) / 2595.0 * std::log(10.0));
    point[size_t(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
    if (point[size_t(i)] < 0 || point[size_t(i)] >= bins)
      fail("node ", node_label(a.node), ": the mel edges [", lower, ", ", upper,
           "] Hz reach past the ", bins, " spectrogram bins");
  }
  std::vector<double> w(static_cast<size_t>(bins * mels), 0.0);
  const auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(j * mels + i)]; };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t lo = point[size_t(i)], mid = point[size_t(i + 1)], hi = point[size_t(i + 2)];
    if (mid == lo) {
      at(mid, i) = 1.0;
    } else {
      for (int64_t j = lo; j <= mid; ++j) at(j, i) = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
    }
    for (int64_t j = mid; j < hi; ++j) at(j, i) = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
  }
  out->push_back(TensorData{dtype, {bins, mels}, write_doubles(dtype, w)});
  return true;
}

bool eval_binary(const Args& a, std::vector<TensorData>* out) {
  // Max and Min are variadic: fold left to right.
  return fold_chain(a, a.node.op_type, out);
}

bool eval_variadic(const Args& a, std::vector<TensorData>* out) {
  return fold_chain(a, a.node.op_type, out);  // Sum, Mean
}

bool eval_unary(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const std::string& op = a.node.op_type;
  kernels::UnaryOp uop;
  if (unary_op_of(a.node, &uop)) {
    const DataType compute = unary_compute_dtype(uop, x.dtype);
    if (compute != DataType::kUndefined) {
      // The plan's way: the kernel, in the compute dtype, with casts around.
      const TensorData in = compute == x.dtype ? data_of(x) : cast_data(data_of(x), compute);
      kernels::UnaryParams p;
      kernel_dtype(compute, &p.dtype);
      p.op = uop;
      p.count = shape_count(x.shape);
      const bool predicate = kernels::unary_is_predicate(uop);
      const DataType result = predicate ? DataType::kBool : compute;
      TensorData t{result, x.shape, std::vector<uint8_t>(p.count * dtype_size(result))};
      if (p.count > 0) kernels::cpu::unary(p, in.bytes.data(), t.bytes.data());
      out->push_back(predicate || compute == x.dtype ? std::move(t) : cast_data(t, x.dtype));
      return true;
    }
    if (!is_floating(x.dtype)) {
      // Integer types a plan cannot hold (int16, uint32, ...) in shape arithmetic.
      if (!is_numeric(x.dtype) || (uop != kernels::UnaryOp::kNeg && uop != kernels::UnaryOp::kAbs &&
                                   uop != kernels::UnaryOp::kSign))
        return false;
      std::vector<int64_t> v = read_ints(x);
      for (int64_t& e : v)
        e = uop == kernels::UnaryOp::kNeg   ? -e
            : uop == kernels::UnaryOp::kAbs ? std::abs(e)
                                            : (e > 0) - (e < 0);
      out->push_back({x.dtype, x.shape, write_ints(x.dtype, v)});
      return true;
    }
    std::vector<double> v = read_doubles(x);
    for (double& e : v)
      if (!unary_double(uop, e, &e)) return false;
    out->push_back({x.dtype, x.shape, write_doubles(x.dtype, v)});
    return true;
  }
  // The core activations Relu, Sigmoid and Tanh on any numeric constant.
  if (!is_numeric(x.dtype)) return false;
  if (!is_floating(x.dtype)) {
    if (op != "Relu") return false;
    std::vector<int64_t> v = read_ints(x);
    for (int64_t& e : v) e = std::max<int64_t>(e, 0);
    out->push_back({x.dtype, x.shape, write_ints(x.dtype, v)});
    return true;
  }
  std::vector<double> v = read_doubles(x);
  for (double& e : v) {
    if (op == "Relu")
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

bool eval_elementwise(const Args& a, std::vector<TensorData>* out) {
  kernels::ElementwiseOp op;
  if (a.in.size() != 2 || a.in[1] == nullptr || !elementwise_op_of(a.node, &op)) return false;
  const Value &x = *a.in[0], &y = *a.in[1];
  if (x.dtype != y.dtype) return false;
  const DataType compute = elementwise_compute_dtype(op, x.dtype);
  if (compute == DataType::kUndefined) return false;
  const Shape shape = broadcast_or_fail(a.node, x.shape, y.shape);
  if (!fits(shape, compute)) return false;
  kernels::ElementwiseParams p;
  p.op = op;
  kernel_dtype(compute, &p.dtype);
  set_out_dims(shape, &p);
  operand_strides(x.shape, p.rank, p.a_strides);
  operand_strides(y.shape, p.rank, p.b_strides);
  const TensorData xa = compute == x.dtype ? data_of(x) : cast_data(data_of(x), compute);
  const TensorData ya = compute == y.dtype ? data_of(y) : cast_data(data_of(y), compute);
  const bool to_bool = kernels::elementwise_out_dtype(op, p.dtype) == kernels::DType::kBool;
  const DataType result = to_bool ? DataType::kBool : compute;
  TensorData t{result, shape, std::vector<uint8_t>(shape_count(shape) * dtype_size(result))};
  if (!t.bytes.empty()) kernels::cpu::elementwise(p, xa.bytes.data(), ya.bytes.data(), t.bytes.data());
  out->push_back(to_bool || compute == x.dtype ? std::move(t) : cast_data(t, x.dtype));
  return true;
}

bool eval_where(const Args& a, std::vector<TensorData>* out) {
  if (a.in.size() != 3 || a.in[1] == nullptr || a.in[2] == nullptr) return false;
  const Value &cond = *a.in[0], &x = *a.in[1], &y = *a.in[2];
  if (cond.dtype != DataType::kBool || x.dtype != y.dtype || dtype_size(x.dtype) == 0) return false;
  const Shape shape =
      broadcast_or_fail(a.node, broadcast_or_fail(a.node, cond.shape, x.shape), y.shape);
  if (!fits(shape, x.dtype)) return false;
  kernels::WhereParams p;
  set_out_dims(shape, &p);
  p.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  operand_strides(cond.shape, p.rank, p.cond_strides);
  operand_strides(x.shape, p.rank, p.x_strides);
  operand_strides(y.shape, p.rank, p.y_strides);
  TensorData t{x.dtype, shape, std::vector<uint8_t>(shape_count(shape) * dtype_size(x.dtype))};
  if (!t.bytes.empty())
    kernels::cpu::where(p, cond.data.data(), x.data.data(), y.data.data(), t.bytes.data());
  out->push_back(std::move(t));
  return true;
}

// CumSum and CumProd through their CPU twin: position embeddings made from a mask of the (fixed)
// input shape fold whole.
bool eval_cum_sum(const Args& a, std::vector<TensorData>* out) {
  if (a.in.size() != 2 || a.in[1] == nullptr) return false;
  const Value &x = *a.in[0], &axis = *a.in[1];
  kernels::DType dtype;
  if (!kernel_dtype(x.dtype, &dtype) || !kernels::cum_sum_supported(dtype) || x.shape.empty())
    return false;
  const std::vector<int64_t> at = read_ints(axis);
  if (at.size() != 1) return false;
  const auto rank = static_cast<int64_t>(x.shape.size());
  const int64_t d = normalize_axis(a.node, at[0], rank);
  kernels::CumSumParams p;
  p.dtype = dtype;
  for (int64_t i = 0; i < rank; ++i) (i < d ? p.outer : i > d ? p.inner : p.length) *= x.shape[i];
  p.exclusive = attr_int(a.node, "exclusive", 0) != 0;
  p.reverse = attr_int(a.node, "reverse", 0) != 0;
  p.product = a.node.op_type == "CumProd";
  TensorData t{x.dtype, x.shape, std::vector<uint8_t>(x.data.size())};
  if (!t.bytes.empty()) kernels::cpu::cum_sum(p, x.data.data(), t.bytes.data());
  out->push_back(std::move(t));
  return true;
}

}  // namespace jetplan::converter::fold
