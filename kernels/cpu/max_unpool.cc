#include "kernels/max_unpool.h"

#include <cstring>

namespace jetplan::kernels::cpu {

void max_unpool(const MaxUnpoolParams& p, const void* x, const int64_t* indices, void* y) {
  const size_t e = p.elem_bytes;
  std::memset(y, 0, static_cast<size_t>(p.y_count) * e);
  const auto* src = static_cast<const unsigned char*>(x);
  auto* dst = static_cast<unsigned char*>(y);
  for (int64_t k = 0; k < p.x_count; ++k) {
    const int64_t at = max_unpool_target(p, indices, k);
    if (at >= 0) std::memcpy(dst + static_cast<size_t>(at) * e, src + static_cast<size_t>(k) * e, e);
  }
}

}  // namespace jetplan::kernels::cpu
