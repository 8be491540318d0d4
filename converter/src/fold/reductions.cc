// The constant folder's evaluator of the Reduce ops (eval.h): the element count of a shape, an
// any() of a constant mask, a sum of weights.
#include <algorithm>
#include <string>
#include <vector>

#include "converter/src/fold/eval.h"
#include "converter/src/ir/error.h"
#include "converter/src/ir/shape_ops.h"
#include "kernels/kernels.h"

namespace jetplan::converter::fold {

// The Reduce ops on constants: float32 and float64 through the Reduce family's CPU twin; integers
// and bool (the element count of a Shape, a ReduceMax of a mask) in int64 for Sum, Prod, Max,
// Min, L1 and SumSquare (integers wrap as int64 does; an empty Max or Min is left to run time).
// The axes as check_reduce reads them: an attribute, or an input from opset 13 (ReduceSum) or
// 18 (the others); none reduces every dim, unless noop_with_empty_axes.
bool eval_reduce(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const std::string& op = a.node.op_type;
  const bool axes_input = a.g.opset >= 18 || (a.g.opset >= 13 && op == "ReduceSum");
  std::vector<int64_t> axes;
  if (axes_input) {
    if (a.in.size() > 1 && a.in[1] != nullptr) axes = read_ints(*a.in[1]);
  } else {
    axes = attr_ints(a.node, "axes", {});
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank > kernels::kMaxRank) return false;
  if (axes.empty() && axes_input && attr_int(a.node, "noop_with_empty_axes", 0) != 0) {
    out->push_back({x.dtype, x.shape, x.data});
    return true;
  }
  uint32_t mask = 0;
  for (int64_t axis : axes) {
    const int64_t d = normalize_axis(a.node, axis, rank);
    if (mask & (1u << d)) fail("node ", node_label(a.node), ": axis ", axis, " is repeated");
    mask |= 1u << d;
  }
  if (axes.empty()) mask = rank == 0 ? 0u : (1u << rank) - 1;
  const bool keepdims = attr_int(a.node, "keepdims", 1) != 0;
  Shape kept = x.shape, shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (mask & (1u << d)) kept[size_t(d)] = 1;
    if (keepdims || !(mask & (1u << d))) shape.push_back(kept[size_t(d)]);
  }
  const int64_t n = shape_count(x.shape), m = shape_count(kept);
  if (x.dtype == DataType::kFloat32 || x.dtype == DataType::kFloat64) {
    kernels::ReduceParams p;
    const char* const kOps[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                                "ReduceLogSumExp"};
    int k = 0;
    while (k < kernels::kReduceOpCount && op != kOps[k]) ++k;
    if (k == kernels::kReduceOpCount || !fits(kept, x.dtype)) return false;
    p.op = static_cast<kernels::ReduceOp>(k);
    p.rank = static_cast<int32_t>(rank);
    for (int64_t d = 0; d < rank; ++d) p.in_dims[d] = x.shape[size_t(d)];
    p.axis_mask = mask;
    TensorData t{x.dtype, shape, std::vector<uint8_t>(size_t(m) * dtype_size(x.dtype))};
    if (x.dtype == DataType::kFloat32)
      kernels::cpu::reduce(p, reinterpret_cast<const float*>(x.data.data()),
                           reinterpret_cast<float*>(t.bytes.data()));
    else
      kernels::cpu::reduce(p, reinterpret_cast<const double*>(x.data.data()),
                           reinterpret_cast<double*>(t.bytes.data()));
    out->push_back(std::move(t));
    return true;
  }
  if (is_floating(x.dtype) || !(is_numeric(x.dtype) || x.dtype == DataType::kBool)) return false;
  const bool sum = op == "ReduceSum", prod = op == "ReduceProd", max = op == "ReduceMax",
             min = op == "ReduceMin", l1 = op == "ReduceL1", square = op == "ReduceSumSquare";
  if (!(sum || prod || max || min || l1 || square) || !fits(kept, x.dtype)) return false;
  if ((max || min) && n == 0 && m > 0) return false;
  const std::vector<int64_t> v = x.dtype == DataType::kBool
                                     ? std::vector<int64_t>(x.data.begin(), x.data.end())
                                     : read_ints(x);
  std::vector<int64_t> acc(size_t(m), prod ? 1 : 0);
  std::vector<bool> seen(size_t(m), false);
  for (int64_t i = 0; i < n; ++i) {
    // The output element of input element i: its index with the reduced dims at 0.
    int64_t rest = i, at = 0, stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t dim = x.shape[size_t(d)], c = rest % dim;
      rest /= dim;
      if (!(mask & (1u << d))) at += c * stride;
      stride *= kept[size_t(d)];
    }
    const int64_t e = v[size_t(i)];
    int64_t& r = acc[size_t(at)];
    // Wrapping int64 arithmetic, through uint64 (signed overflow is undefined).
    const auto wrap = [](uint64_t u) { return static_cast<int64_t>(u); };
    if (sum) r = wrap(uint64_t(r) + uint64_t(e));
    else if (prod) r = wrap(uint64_t(r) * uint64_t(e));
    else if (l1) r = wrap(uint64_t(r) + uint64_t(e < 0 ? -e : e));
    else if (square) r = wrap(uint64_t(r) + uint64_t(e) * uint64_t(e));
    else r = !seen[size_t(at)] ? e : max ? std::max(r, e) : std::min(r, e);
    seen[size_t(at)] = true;
  }
  TensorData t{x.dtype, shape, {}};
  if (x.dtype == DataType::kBool) {
    for (int64_t e : acc) t.bytes.push_back(e != 0);
  } else {
    t.bytes = write_ints(x.dtype, acc);
  }
  out->push_back(std::move(t));
  return true;
}

}  // namespace jetplan::converter::fold
