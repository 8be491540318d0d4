#include "kernels/gather.h"

#include <cstring>

#include "kernels/cpu/gather_index.h"

namespace jetplan::kernels::cpu {

void gather(const GatherParams& p, const void* data, const void* indices, void* y) {
  const auto* in = static_cast<const unsigned char*>(data);
  auto* out = static_cast<unsigned char*>(y);
  const int64_t row = p.inner * p.elem_bytes;  // bytes of one index's slab
  if (row <= 0) return;                        // an empty output may come with null pointers
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t j = 0; j < p.num_indices; ++j) {
      unsigned char* dst = out + (o * p.num_indices + j) * row;
      const int64_t k = resolve_index(load_index(p.index_dtype, indices, j), p.axis_len);
      if (k < 0)
        std::memset(dst, 0, static_cast<size_t>(row));
      else
        std::memcpy(dst, in + (o * p.axis_len + k) * row, static_cast<size_t>(row));
    }
  }
}

}  // namespace jetplan::kernels::cpu
