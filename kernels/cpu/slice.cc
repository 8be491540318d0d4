#include "kernels/cpu/dense_index.h"
#include "kernels/slice.h"

namespace jetplan::kernels::cpu {

void slice(const SliceParams& p, const void* x, void* y) {
  int64_t x_strides[kMaxRank];
  dense_strides(p.rank, p.x_dims, x_strides);
  move_elements(p.rank, p.out_dims, p.elem_bytes, x, y, [&](int32_t d, int64_t coord) {
    return (p.starts[d] + coord * p.steps[d]) * x_strides[d];
  });
}

}  // namespace jetplan::kernels::cpu
