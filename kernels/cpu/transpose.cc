#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/cpu/half.h"
#include "kernels/transpose.h"

namespace jetplan::kernels::cpu {

void transpose(const TransposeParams& p, const void* x, void* y) {
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    // Peel the coordinates of output element i off from the last dim (the fastest) up.
    int64_t rest = i, offset = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      offset += (rest % p.out_dims[d]) * p.x_strides[d];
      rest /= p.out_dims[d];
    }
    if (p.half_to_float) {
      uint16_t h;
      std::memcpy(&h, in + offset * 2, 2);
      const float f = half_to_float(h);
      std::memcpy(out + i * 4, &f, 4);
    } else {
      std::memcpy(out + i * p.elem_bytes, in + offset * p.elem_bytes, elem);
    }
  }
}

}  // namespace jetplan::kernels::cpu
