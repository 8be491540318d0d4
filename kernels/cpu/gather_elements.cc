#include "kernels/gather_elements.h"

#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/cpu/gather_index.h"

namespace jetplan::kernels::cpu {

void gather_elements(const GatherElementsParams& p, const void* data, const void* indices,
                     void* y) {
  int64_t data_strides[kMaxRank];
  dense_strides(p.rank, p.data_dims, data_strides);
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(data);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t k = resolve_index(load_index(p.index_dtype, indices, i), p.data_dims[p.axis]);
    if (k < 0) {
      std::memset(out + i * p.elem_bytes, 0, elem);
      continue;
    }
    const int64_t offset = source_offset(i, p.rank, p.out_dims, [&](int32_t d, int64_t coord) {
      return (d == p.axis ? k : coord) * data_strides[d];
    });
    std::memcpy(out + i * p.elem_bytes, in + offset * p.elem_bytes, elem);
  }
}

}  // namespace jetplan::kernels::cpu
