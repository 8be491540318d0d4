#include "kernels/scatter.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/dense_index.h"
#include "kernels/cpu/half.h"
#include "kernels/cpu/gather_index.h"

namespace jetplan::kernels {

bool scatter_reduces(ScatterReduction r, DType t) {
  return r == ScatterReduction::kNone || t == DType::kFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64 || t == DType::kInt32 || t == DType::kInt64;
}

uint64_t scatter_walk_reads(const ScatterParams& p) {
  if (p.index_rank < 1 || p.index_rank > kMaxRank) return 0;
  if (!p.nd) return p.axis >= 0 && p.axis < p.index_rank ? uint64_t(p.index_dims[p.axis]) : 0;
  const uint64_t k = uint64_t(p.index_dims[p.index_rank - 1]);
  uint64_t tuples = 1;
  for (int32_t d = 0; d + 1 < p.index_rank; ++d) tuples *= uint64_t(p.index_dims[d]);
  if (!p.sorted) return tuples * k;
  uint64_t steps = 2;  // the search's steps, and the tuple it lands on
  while (tuples > 1) tuples >>= 1, ++steps;
  return steps * k;
}

const char* scatter_shapes(ScatterParams* p, int32_t rank, const int64_t* data_dims,
                           int32_t index_rank, const int64_t* index_dims, int32_t updates_rank,
                           const int64_t* updates_dims) {
  if (rank < 1 || rank > kMaxRank || index_rank < 1 || index_rank > kMaxRank)
    return "data and indices need a rank of 1 to 8";
  if (p->nd) {
    const int64_t k = index_dims[index_rank - 1];
    if (k < 1 || k > rank) return "the indices' last dim must be 1 to data's rank";
    if (updates_rank != index_rank - 1 + rank - k)
      return "updates must have the indices' dims but the last, then data's from the indexed on";
    for (int32_t d = 0; d < updates_rank; ++d) {
      const int64_t want = d < index_rank - 1 ? index_dims[d] : data_dims[k + d - (index_rank - 1)];
      if (updates_dims[d] != want)
        return "updates must have the indices' dims but the last, then data's from the indexed on";
    }
  } else {
    if (index_rank != rank || updates_rank != rank) return "data, indices and updates need one rank";
    if (p->axis < 0 || p->axis >= rank) return "axis is out of range";
    for (int32_t d = 0; d < rank; ++d) {
      if (updates_dims[d] != index_dims[d]) return "indices and updates need one shape";
      if (d != p->axis && index_dims[d] > data_dims[d])
        return "indices are larger than data off the axis";
    }
  }
  p->rank = rank;
  p->index_rank = index_rank;
  for (int32_t d = 0; d < rank; ++d) p->data_dims[d] = data_dims[d];
  for (int32_t d = 0; d < index_rank; ++d) p->index_dims[d] = index_dims[d];
  return nullptr;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

namespace {

template <typename T>
T combine(ScatterReduction r, T have, T u) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;  // a defined two's-complement wrap
    if (r == ScatterReduction::kAdd) return T(U(have) + U(u));
    if (r == ScatterReduction::kMul) return T(U(have) * U(u));
  }
  switch (r) {
    case ScatterReduction::kAdd:
      return have + u;
    case ScatterReduction::kMul:
      return have * u;
    case ScatterReduction::kMax:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(have) || std::isnan(u)) return have + u;  // NaN
      }
      return have < u ? u : have;
    case ScatterReduction::kMin:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(have) || std::isnan(u)) return have + u;
      }
      return u < have ? u : have;
    case ScatterReduction::kNone:
      break;
  }
  return u;
}

template <typename T>
void apply_as(ScatterReduction r, unsigned char* dst, const unsigned char* src) {
  T have, u;
  std::memcpy(&have, dst, sizeof(T));
  std::memcpy(&u, src, sizeof(T));
  have = combine(r, have, u);
  std::memcpy(dst, &have, sizeof(T));
}

// One element of an update onto y.
void apply(const ScatterParams& p, unsigned char* dst, const unsigned char* src) {
  if (p.reduction == ScatterReduction::kNone) {
    std::memcpy(dst, src, static_cast<size_t>(p.elem_bytes));
    return;
  }
  switch (p.dtype) {
    case DType::kFloat16: {  // in float32, rounded once an update (the CUDA kernel's order)
      uint16_t have, u;
      std::memcpy(&have, dst, 2);
      std::memcpy(&u, src, 2);
      have = half_from_float(combine(p.reduction, half_to_float(have), half_to_float(u)));
      std::memcpy(dst, &have, 2);
      return;
    }
    case DType::kFloat32:
      return apply_as<float>(p.reduction, dst, src);
    case DType::kFloat64:
      return apply_as<double>(p.reduction, dst, src);
    case DType::kInt32:
      return apply_as<int32_t>(p.reduction, dst, src);
    case DType::kInt64:
      return apply_as<int64_t>(p.reduction, dst, src);
    default:
      return;  // scatter_reduces refused it at load
  }
}

}  // namespace

void scatter(const ScatterParams& p, const void* data, const void* indices, const void* updates,
             void* y) {
  auto* out = static_cast<unsigned char*>(y);
  const auto* upd = static_cast<const unsigned char*>(updates);
  const int64_t eb = p.elem_bytes;
  int64_t data_strides[kMaxRank];
  dense_strides(p.rank, p.data_dims, data_strides);
  const int64_t total = dense_count(p.rank, p.data_dims);
  if (data != y && total > 0) std::memmove(out, data, static_cast<size_t>(total * eb));
  if (!p.nd) {
    const int64_t count = dense_count(p.index_rank, p.index_dims);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t k = resolve_index(load_index(p.index_dtype, indices, i), p.data_dims[p.axis]);
      if (k < 0) continue;
      const int64_t offset = source_offset(i, p.rank, p.index_dims, [&](int32_t d, int64_t c) {
        return (d == p.axis ? k : c) * data_strides[d];
      });
      apply(p, out + offset * eb, upd + i * eb);
    }
    return;
  }
  // ScatterND: tuples of k indices, each a slice of `slice` elements.
  const int64_t k = p.index_dims[p.index_rank - 1];
  const int64_t tuples = dense_count(p.index_rank - 1, p.index_dims);
  const int64_t slice = data_strides[k - 1];  // data's dims from k on
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    bool inside = true;
    for (int64_t j = 0; j < k && inside; ++j) {
      const int64_t v = resolve_index(load_index(p.index_dtype, indices, t * k + j), p.data_dims[j]);
      inside = v >= 0;
      offset += v * data_strides[j];
    }
    if (!inside) continue;
    for (int64_t e = 0; e < slice; ++e) apply(p, out + (offset + e) * eb, upd + (t * slice + e) * eb);
  }
}

}  // namespace jetplan::kernels::cpu
