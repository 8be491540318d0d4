#include <cstring>

#include "kernels/broadcast.h"
#include "kernels/cpu/dense_index.h"

namespace jetplan::kernels::cpu {

void broadcast(const BroadcastParams& p, const void* x, void* y) {
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      // The modulo makes one struct serve Tile (x repeated whole) and Expand (x_dims of 1).
      offset += (rest % p.out_dims[d] % p.x_dims[d]) * p.x_strides[d];
      rest /= p.out_dims[d];
    }
    std::memcpy(out + i * p.elem_bytes, in + offset * p.elem_bytes, elem);
  }
}

}  // namespace jetplan::kernels::cpu
