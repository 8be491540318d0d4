#include <cstring>

#include "kernels/cpu/tensor_ops.h"

namespace jetplan::kernels::cpu {

namespace {

int64_t load_index(DType t, const void* indices, int64_t i) {
  if (t == DType::kInt32) {
    int32_t v;
    std::memcpy(&v, static_cast<const unsigned char*>(indices) + i * 4, sizeof v);
    return v;
  }
  int64_t v;
  std::memcpy(&v, static_cast<const unsigned char*>(indices) + i * 8, sizeof v);
  return v;
}

// The index resolved into [0, len), or -1 when it lies outside even after counting from the end.
int64_t resolve(int64_t index, int64_t len) {
  if (index < 0) index += len;
  return index >= 0 && index < len ? index : -1;
}

}  // namespace

void gather(const GatherParams& p, const void* data, const void* indices, void* y) {
  const auto* in = static_cast<const unsigned char*>(data);
  auto* out = static_cast<unsigned char*>(y);
  const int64_t row = p.inner * p.elem_bytes;  // bytes of one index's slab
  if (row <= 0) return;                        // an empty output may come with null pointers
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t j = 0; j < p.num_indices; ++j) {
      unsigned char* dst = out + (o * p.num_indices + j) * row;
      const int64_t k = resolve(load_index(p.index_dtype, indices, j), p.axis_len);
      if (k < 0)
        std::memset(dst, 0, static_cast<size_t>(row));
      else
        std::memcpy(dst, in + (o * p.axis_len + k) * row, static_cast<size_t>(row));
    }
  }
}

void gather_elements(const GatherElementsParams& p, const void* data, const void* indices,
                     void* y) {
  int64_t data_strides[kMaxRank];
  int64_t dense = 1, count = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    data_strides[d] = dense;
    dense *= p.data_dims[d];
    count *= p.out_dims[d];
  }
  const auto* in = static_cast<const unsigned char*>(data);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = resolve(load_index(p.index_dtype, indices, i), p.data_dims[p.axis]);
    if (k < 0) {
      std::memset(out + i * p.elem_bytes, 0, elem);
      continue;
    }
    int64_t rest = i, offset = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      offset += (d == p.axis ? k : coord) * data_strides[d];
    }
    std::memcpy(out + i * p.elem_bytes, in + offset * p.elem_bytes, elem);
  }
}

}  // namespace jetplan::kernels::cpu
