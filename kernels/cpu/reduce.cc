#include <cmath>
#include <limits>

#include "kernels/reduce.h"

namespace jetplan::kernels::cpu {

namespace {

// Visits the reduced elements of one output in row-major order of the reduced dims.
class ReducedSet {
 public:
  ReducedSet(const ReduceParams& p, const int64_t* stride) {
    for (int d = 0; d < p.rank; ++d) {
      if (!(p.axis_mask >> d & 1u)) continue;
      dims_[count_] = p.in_dims[d];
      stride_[count_] = stride[d];
      ++count_;
    }
  }

  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < count_; ++i) n *= dims_[i];
    return n;
  }

  // Calls f(offset) for every reduced element, offsets relative to the output's first element.
  template <typename F>
  void for_each(F&& f) const {
    if (size() == 0) return;
    int64_t c[kMaxRank] = {};
    int64_t offset = 0;
    for (;;) {
      f(offset);
      int i = count_ - 1;
      for (; i >= 0; --i) {
        offset += stride_[i];
        if (++c[i] < dims_[i]) break;
        offset -= c[i] * stride_[i];
        c[i] = 0;
      }
      if (i < 0) return;
    }
  }

 private:
  int count_ = 0;
  int64_t dims_[kMaxRank] = {};
  int64_t stride_[kMaxRank] = {};
};

constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
double reduce_one(ReduceOp op, const T* x, const ReducedSet& set) {
  double acc = 0.0;
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
    case ReduceOp::kLogSum:
      set.for_each([&](int64_t i) { acc += x[i]; });
      if (op == ReduceOp::kMean) return acc / static_cast<double>(set.size());
      return op == ReduceOp::kLogSum ? std::log(acc) : acc;
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      const bool is_max = op == ReduceOp::kMax;
      acc = is_max ? -kInf : kInf;
      set.for_each([&](int64_t i) {
        const double v = x[i];
        if (std::isnan(v) || (is_max ? v > acc : v < acc)) acc = v;  // NaN, once in, stays
      });
      return acc;
    }
    case ReduceOp::kProd:
      acc = 1.0;
      set.for_each([&](int64_t i) { acc *= x[i]; });
      return acc;
    case ReduceOp::kL1:
      set.for_each([&](int64_t i) { acc += std::fabs(static_cast<double>(x[i])); });
      return acc;
    case ReduceOp::kL2:
    case ReduceOp::kSumSquare:
      set.for_each([&](int64_t i) { acc += static_cast<double>(x[i]) * x[i]; });
      return op == ReduceOp::kL2 ? std::sqrt(acc) : acc;
    case ReduceOp::kLogSumExp: {
      // Shifting by the max keeps every exp in (0, 1]. An infinite or NaN max is the answer
      // itself (and would turn x - max into NaN).
      double max = -kInf;
      set.for_each([&](int64_t i) {
        const double v = x[i];
        if (!std::isnan(max) && (std::isnan(v) || v > max)) max = v;
      });
      if (!std::isfinite(max)) return max;
      set.for_each([&](int64_t i) { acc += std::exp(static_cast<double>(x[i]) - max); });
      return max + std::log(acc);
    }
  }
  return acc;
}

// One output at a time, its reduced elements in row-major order, accumulated in double and
// rounded to T once.
template <typename T>
void reduce_all(const ReduceParams& p, const T* x, T* y) {
  int64_t stride[kMaxRank];
  int64_t s = 1;
  for (int d = p.rank; d-- > 0;) {
    stride[d] = s;
    s *= p.in_dims[d];
  }
  const ReducedSet set(p, stride);
  int64_t kept_dims[kMaxRank], kept_stride[kMaxRank];
  int kept = 0;
  int64_t out_count = 1;
  for (int d = 0; d < p.rank; ++d) {
    if (p.axis_mask >> d & 1u) continue;
    kept_dims[kept] = p.in_dims[d];
    kept_stride[kept] = stride[d];
    out_count *= p.in_dims[d];
    ++kept;
  }
  int64_t c[kMaxRank] = {};
  int64_t base = 0;  // input offset of output o's first reduced element
  for (int64_t o = 0; o < out_count; ++o) {
    y[o] = static_cast<T>(reduce_one(p.op, x + base, set));
    for (int i = kept - 1; i >= 0; --i) {
      base += kept_stride[i];
      if (++c[i] < kept_dims[i]) break;
      base -= c[i] * kept_stride[i];
      c[i] = 0;
    }
  }
}

}  // namespace

void reduce(const ReduceParams& p, const float* x, float* y) { reduce_all(p, x, y); }

void reduce(const ReduceParams& p, const double* x, double* y) { reduce_all(p, x, y); }

}  // namespace jetplan::kernels::cpu
