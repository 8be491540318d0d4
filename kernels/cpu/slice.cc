#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/slice.h"

namespace jetplan::kernels::cpu {

void slice(const SliceParams& p, const void* x, void* y) {
  int64_t x_strides[kMaxRank];
  dense_strides(p.rank, p.x_dims, x_strides);
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      offset += (p.starts[d] + coord * p.steps[d]) * x_strides[d];
    }
    std::memcpy(out + i * p.elem_bytes, in + offset * p.elem_bytes, elem);
  }
}

}  // namespace jetplan::kernels::cpu
