#include "kernels/cpu/dense_index.h"
#include "kernels/pad.h"

namespace jetplan::kernels::cpu {

void pad(const PadParams& p, const void* x, void* y) {
  int64_t x_strides[kMaxRank];
  dense_strides(p.rank, p.x_dims, x_strides);
  move_elements(
      p.rank, p.out_dims, p.elem_bytes, x, y,
      [&](int32_t d, int64_t coord) {
        const int64_t c = pad_source_coord(p, d, coord);
        return c < 0 ? int64_t{-1} : c * x_strides[d];
      },
      p.value);
}

}  // namespace jetplan::kernels::cpu
