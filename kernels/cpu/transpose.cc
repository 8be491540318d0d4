#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/cpu/half.h"
#include "kernels/transpose.h"

namespace jetplan::kernels::cpu {

void transpose(const TransposeParams& p, const void* x, void* y) {
  const auto source = [&](int32_t d, int64_t coord) { return coord * p.x_strides[d]; };
  if (!p.half_to_float && !p.float_to_half) {
    move_elements(p.rank, p.out_dims, p.elem_bytes, x, y, source);
    return;
  }
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t from = source_offset(i, p.rank, p.out_dims, source);
    if (p.half_to_float) {
      uint16_t h;
      std::memcpy(&h, in + from * 2, 2);
      const float f = half_to_float(h);
      std::memcpy(out + i * 4, &f, 4);
    } else {
      float f;
      std::memcpy(&f, in + from * 4, 4);
      const uint16_t h = half_from_float(f);
      std::memcpy(out + i * 2, &h, 2);
    }
  }
}

}  // namespace jetplan::kernels::cpu
