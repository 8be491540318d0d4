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
// The axes, output shape and op as check_reduce reads them (reduce_spec).
bool eval_reduce(const Args& a, std::vector<TensorData>* out) {
  const Value& x = *a.in[0];
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank > kernels::kMaxRank) return false;
  ReduceSpec spec;
  std::string why;
  if (!reduce_spec(a.g, a.node, x.shape, &spec, &why)) return false;
  if (spec.identity) {
    out->push_back({x.dtype, x.shape, x.data});
    return true;
  }
  uint32_t mask = 0;
  for (int32_t d : spec.axes) mask |= 1u << d;
  const Shape& kept = spec.kept;
  const Shape& shape = spec.out;
  const int64_t n = shape_count(x.shape), m = shape_count(kept);
  if (x.dtype == DataType::kFloat32 || x.dtype == DataType::kFloat64) {
    if (!fits(kept, x.dtype)) return false;
    kernels::ReduceParams p;
    p.op = static_cast<kernels::ReduceOp>(spec.op);  // one numbering, as the runtime reads it
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
  using R = fb::ReduceOp;
  const bool sum = spec.op == R::Sum, prod = spec.op == R::Prod, max = spec.op == R::Max,
             min = spec.op == R::Min, l1 = spec.op == R::L1, square = spec.op == R::SumSquare;
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
