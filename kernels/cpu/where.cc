#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/where.h"

namespace jetplan::kernels::cpu {

void where(const WhereParams& p, const unsigned char* cond, const void* x, const void* y,
           void* out) {
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* xs = static_cast<const unsigned char*>(x);
  const auto* ys = static_cast<const unsigned char*>(y);
  auto* dst = static_cast<unsigned char*>(out);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * p.elem_bytes, where_source(p, i, cond, xs, ys), elem);
  }
}

}  // namespace jetplan::kernels::cpu
