// ScatterElements and ScatterND on the GPU, deterministic and in one launch: each thread owns an
// output element, starts from data's value and walks the updates that can land on it in the
// twin's order (row-major order of the updates), applying those that do. No atomics, so the
// last of duplicate indices wins and reductions combine in the twin's order: the result equals
// the CPU twin's (kernels/cpu/scatter.cc) bit for bit but for NaN payloads. The walk is
//   ScatterElements: the index_dims[axis] updates of the element's line along the axis;
//   ScatterND:       every index tuple (a thread of a slice reads the same tuples, from cache),
//                    or a binary search of them where the converter marked them sorted;
// so the work is output elements x walk length, which selection bounds (scatter_select.cc).
// Without a reduction the walk runs backwards and stops at the first update that lands.
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/scatter.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ __forceinline__ int64_t index_at(const ScatterParams& p, const void* indices, int64_t i) {
  return p.index_dtype == DType::kInt32 ? int64_t(static_cast<const int32_t*>(indices)[i])
                                        : static_cast<const int64_t*>(indices)[i];
}

// The index resolved into [0, len), or -1 (the twin's resolve_index).
__device__ __forceinline__ int64_t resolve(int64_t index, int64_t len) {
  if (index < 0) index += len;
  return index >= 0 && index < len ? index : -1;
}

// Calls f(u) for each update element u that lands on output element j (j's coordinates in
// `coord`, data's dense strides in `strides`), in the updates' row-major order, or in reverse
// order when kReverse; f returns false to stop the walk.
template <bool kReverse, typename F>
__device__ void walk_updates(const ScatterParams& p, const void* indices, int64_t j,
                             const int64_t* coord, const int64_t* strides, F f) {
  if (!p.nd) {
    int64_t base = 0, along = 0, stride = 1;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      if (d != p.axis) {
        if (coord[d] >= p.index_dims[d]) return;  // no update's line reaches this element
        base += coord[d] * stride;
      } else {
        along = stride;
      }
      stride *= p.index_dims[d];
    }
    const int64_t len = p.index_dims[p.axis], dim = p.data_dims[p.axis], at = coord[p.axis];
    for (int64_t n = 0; n < len; ++n) {
      const int64_t u = base + (kReverse ? len - 1 - n : n) * along;
      if (resolve(index_at(p, indices, u), dim) == at && !f(u)) return;
    }
    return;
  }
  const int64_t k = p.index_dims[p.index_rank - 1];
  const int64_t slice = strides[k - 1];
  const int64_t row = j - j % slice, e = j % slice;
  int64_t tuples = 1;
  for (int32_t d = 0; d + 1 < p.index_rank; ++d) tuples *= p.index_dims[d];
  // The offset of data that tuple t names, or -1.
  const auto target = [&](int64_t t) {
    int64_t offset = 0;
    for (int64_t m = 0; m < k && offset >= 0; ++m) {
      const int64_t v = resolve(index_at(p, indices, t * k + m), p.data_dims[m]);
      offset = v < 0 ? -1 : offset + v * strides[m];
    }
    return offset;
  };
  if (p.sorted) {  // strictly increasing offsets: at most one tuple names this row
    int64_t lo = 0, hi = tuples;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (target(mid) < row) lo = mid + 1;
      else hi = mid;
    }
    if (lo < tuples && target(lo) == row) f(lo * slice + e);
    return;
  }
  for (int64_t n = 0; n < tuples; ++n) {
    const int64_t t = kReverse ? tuples - 1 - n : n;
    if (target(t) == row && !f(t * slice + e)) return;
  }
}

// One element of data and of the updates: how it is read, combined (in C) and written back, so
// that Float16 rounds after every combination as the twin does.
template <typename S>
struct Lane {
  using C = S;
  static __device__ C load(const S* x, int64_t i) { return x[i]; }
  static __device__ S store(C v) { return v; }
};
template <>
struct Lane<__half> {
  using C = float;
  static __device__ C load(const __half* x, int64_t i) { return __half2float(x[i]); }
  static __device__ __half store(C v) { return __float2half_rn(v); }
};

template <typename C>
__device__ C combine(ScatterReduction r, C have, C u) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;  // a defined two's-complement wrap, as the twin's
    switch (r) {
      case ScatterReduction::kAdd: return C(U(have) + U(u));
      case ScatterReduction::kMul: return C(U(have) * U(u));
      case ScatterReduction::kMax: return have < u ? u : have;
      case ScatterReduction::kMin: return u < have ? u : have;
      default: return u;
    }
  } else {
    switch (r) {
      case ScatterReduction::kAdd: return have + u;
      case ScatterReduction::kMul: return have * u;
      case ScatterReduction::kMax:
        if (isnan(have) || isnan(u)) return have + u;
        return have < u ? u : have;
      case ScatterReduction::kMin:
        if (isnan(have) || isnan(u)) return have + u;
        return u < have ? u : have;
      default: return u;
    }
  }
}

// Data's coordinates of element j, and data's dense strides.
__device__ void coordinates(const ScatterParams& p, int64_t j, int64_t* coord, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    coord[d] = (j / stride) % p.data_dims[d];
    stride *= p.data_dims[d];
  }
}

template <typename S>
__device__ void scatter_reduce_of(const StepPointers& ptrs, const ScatterParams& p, int64_t count) {
  const S* data = static_cast<const S*>(ptrs.in[0]);
  const S* updates = static_cast<const S*>(ptrs.in[2]);
  S* y = static_cast<S*>(ptrs.out[0]);
  int64_t coord[kMaxRank], strides[kMaxRank];
  for (int64_t j = global_thread(); j < count; j += global_threads()) {
    coordinates(p, j, coord, strides);
    S v = data[j];
    walk_updates<false>(p, ptrs.in[1], j, coord, strides, [&](int64_t u) {
      v = Lane<S>::store(combine(p.reduction, Lane<S>::load(&v, 0), Lane<S>::load(updates, u)));
      return true;
    });
    y[j] = v;
  }
}

// No reduction: bytes moved, the last update that lands wins.
template <typename B>
__device__ void scatter_replace_of(const StepPointers& ptrs, const ScatterParams& p, int64_t count) {
  const B* data = static_cast<const B*>(ptrs.in[0]);
  const B* updates = static_cast<const B*>(ptrs.in[2]);
  B* y = static_cast<B*>(ptrs.out[0]);
  int64_t coord[kMaxRank], strides[kMaxRank];
  for (int64_t j = global_thread(); j < count; j += global_threads()) {
    coordinates(p, j, coord, strides);
    B v = data[j];
    walk_updates<true>(p, ptrs.in[1], j, coord, strides, [&](int64_t u) {
      v = updates[u];
      return false;
    });
    y[j] = v;
  }
}

__device__ void scatter(const StepPointers& ptrs, const ScatterParams& p) {
  // What load and selection checked, again: the plan is untrusted.
  if (p.rank < 1 || p.rank > kMaxRank || p.index_rank < 1 || p.index_rank > kMaxRank) return;
  if (p.index_dtype != DType::kInt32 && p.index_dtype != DType::kInt64) return;
  if (p.nd ? p.index_dims[p.index_rank - 1] < 1 || p.index_dims[p.index_rank - 1] > p.rank
           : p.axis < 0 || p.axis >= p.rank || p.index_rank != p.rank)
    return;
  int64_t count = 1;
  for (int32_t d = 0; d < p.rank; ++d) count *= p.data_dims[d];
  if (p.reduction == ScatterReduction::kNone) {
    switch (p.elem_bytes) {
      case 1: return scatter_replace_of<uint8_t>(ptrs, p, count);
      case 2: return scatter_replace_of<uint16_t>(ptrs, p, count);
      case 4: return scatter_replace_of<uint32_t>(ptrs, p, count);
      case 8: return scatter_replace_of<uint64_t>(ptrs, p, count);
      default: return;
    }
  }
  switch (p.dtype) {
    case DType::kFloat16: return scatter_reduce_of<__half>(ptrs, p, count);
    case DType::kFloat32: return scatter_reduce_of<float>(ptrs, p, count);
    case DType::kFloat64: return scatter_reduce_of<double>(ptrs, p, count);
    case DType::kInt32: return scatter_reduce_of<int32_t>(ptrs, p, count);
    case DType::kInt64: return scatter_reduce_of<int64_t>(ptrs, p, count);
    default: return;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_scatter, ScatterParams, jetplan::kernels::cuda::scatter)
