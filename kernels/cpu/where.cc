#include <cstring>

#include "kernels/where.h"

namespace jetplan::kernels::cpu {

void where(const WhereParams& p, const unsigned char* cond, const void* x, const void* y,
           void* out) {
  int64_t count = 1;
  for (int d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  const auto* xs = static_cast<const unsigned char*>(x);
  const auto* ys = static_cast<const unsigned char*>(y);
  auto* dst = static_cast<unsigned char*>(out);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, c_off = 0, x_off = 0, y_off = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t coord = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      c_off += coord * p.cond_strides[d];
      x_off += coord * p.x_strides[d];
      y_off += coord * p.y_strides[d];
    }
    const unsigned char* src =
        cond[c_off] != 0 ? xs + x_off * p.elem_bytes : ys + y_off * p.elem_bytes;
    std::memcpy(dst + i * p.elem_bytes, src, elem);
  }
}

}  // namespace jetplan::kernels::cpu
