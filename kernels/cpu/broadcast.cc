#include "kernels/broadcast.h"
#include "kernels/cpu/dense_index.h"

namespace jetplan::kernels::cpu {

void broadcast(const BroadcastParams& p, const void* x, void* y) {
  move_elements(p.rank, p.out_dims, p.elem_bytes, x, y, [&](int32_t d, int64_t coord) {
    // The modulo makes one struct serve Tile (x repeated whole) and Expand (x_dims of 1).
    return (coord % p.x_dims[d]) * p.x_strides[d];
  });
}

}  // namespace jetplan::kernels::cpu
