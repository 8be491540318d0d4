#include <cstring>

#include "kernels/cpu/dense_index.h"
#include "kernels/pad.h"

namespace jetplan::kernels::cpu {

namespace {

int64_t positive_mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

// The coordinate in x that output coordinate `o` of dim d reads, or -1 for the constant value.
// Negative pads crop first: x is reduced to the `kept` elements starting at `first`, and
// `o - before` is the coordinate in that cropped range (before = the positive begin pad).
int64_t source_coord(const PadParams& p, int d, int64_t o) {
  const int64_t begin = p.pads_begin[d];
  const int64_t end = p.out_dims[d] - p.x_dims[d] - begin;
  const int64_t first = begin < 0 ? -begin : 0;
  const int64_t kept = p.x_dims[d] - first - (end < 0 ? -end : 0);
  const int64_t j = o - (begin > 0 ? begin : 0);
  if (j >= 0 && j < kept) return first + j;
  if (kept <= 0) return -1;  // nothing to extend from; plan load refuses this outside kConstant
  switch (p.mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kEdge:
      return first + (j < 0 ? 0 : kept - 1);
    case PadMode::kWrap:
      return first + positive_mod(j, kept);
    case PadMode::kReflect: {
      if (kept == 1) return first;
      // Mirroring at both ends without repeating the edge is periodic with period 2 (kept - 1):
      // 0 1 2 .. kept-1 kept-2 .. 1 | 0 1 ...
      const int64_t period = 2 * (kept - 1);
      const int64_t r = positive_mod(j, period);
      return first + (r < kept ? r : period - r);
    }
  }
  return -1;  // unreachable for a validated plan
}

}  // namespace

void pad(const PadParams& p, const void* x, void* y) {
  int64_t x_strides[kMaxRank];
  dense_strides(p.rank, p.x_dims, x_strides);
  const int64_t count = dense_count(p.rank, p.out_dims);
  const auto* in = static_cast<const unsigned char*>(x);
  auto* out = static_cast<unsigned char*>(y);
  const size_t elem = static_cast<size_t>(p.elem_bytes);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    bool inside = true;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t c = source_coord(p, d, rest % p.out_dims[d]);
      rest /= p.out_dims[d];
      if (c < 0) {
        inside = false;
        break;
      }
      offset += c * x_strides[d];
    }
    std::memcpy(out + i * p.elem_bytes, inside ? in + offset * p.elem_bytes : p.value, elem);
  }
}

}  // namespace jetplan::kernels::cpu
