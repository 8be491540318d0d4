#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/pad.h"

namespace jetplan::kernels::cpu {

void pad(const PadParams& p, const void* x, void* y) {
  int64_t x_strides[kMaxRank];
  dense_strides(p.rank, p.x_dims, x_strides);
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    bool inside = true;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t c = pad_source_coord(p, d, rest % p.out_dims[d]);
      rest /= p.out_dims[d];
      if (c < 0) {
        inside = false;
        break;
      }
      offset += c * x_strides[d];
    }
    std::memcpy(out + i * p.elem_bytes, inside ? in + offset * p.elem_bytes : p.value, elem);
  }
}

}  // namespace jetplan::kernels::cpu
