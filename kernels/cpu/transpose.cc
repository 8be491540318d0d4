#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/cpu/half.h"
#include "kernels/transpose.h"

namespace jetplan::kernels::cpu {

void transpose(const TransposeParams& p, const void* x, void* y) {
  const auto source = [&](int32_t d, int64_t coord) { return coord * p.x_strides[d]; };
  if (!p.half_to_float && !p.float_to_half && p.y_block == 0) {
    move_elements(p.rank, p.out_dims, p.elem_bytes, x, y, source);
    return;
  }
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t from = source_offset(i, p.rank, p.out_dims, source);
    const int64_t to = y_index(p, i);
    if (p.half_to_float) {
      uint16_t h;
      std::memcpy(&h, in + from * 2, 2);
      const float f = half_to_float(h);
      std::memcpy(out + to * 4, &f, 4);
    } else if (p.float_to_half) {
      float f;
      std::memcpy(&f, in + from * 4, 4);
      const uint16_t h = half_from_float(f);
      std::memcpy(out + to * 2, &h, 2);
    } else {
      std::memcpy(out + to * p.elem_bytes, in + from * p.elem_bytes, elem);
    }
  }
}

}  // namespace jetplan::kernels::cpu
