#include "kernels/top_k.h"

#include <algorithm>

#include "kernels/cpu/float_ranking.h"

namespace jetplan::kernels::cpu {

int64_t topk_workspace_bytes(const TopKParams& p) {
  return p.axis * static_cast<int64_t>(sizeof(int64_t));
}

// Per row: the axis indices go into the workspace and std::partial_sort (in place, no allocation)
// brings the first k of a strict total order to the front, so the result does not depend on the
// sort's internals.
void topk(const TopKParams& p, const float* x, void* workspace, float* values, int64_t* indices) {
  int64_t* order = static_cast<int64_t*>(workspace);
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t in = 0; in < p.inner; ++in) {
      const float* xr = x + o * p.axis * p.inner + in;
      const auto precedes = [&](int64_t a, int64_t b) {
        const float va = xr[a * p.inner], vb = xr[b * p.inner];
        if (same_rank(va, vb)) return a < b;
        return p.largest ? ranks_above(va, vb) : ranks_above(vb, va);
      };
      for (int64_t j = 0; j < p.axis; ++j) order[j] = j;
      std::partial_sort(order, order + p.k, order + p.axis, precedes);
      for (int64_t j = 0; j < p.k; ++j) {
        const int64_t out = (o * p.k + j) * p.inner + in;
        values[out] = xr[order[j] * p.inner];
        indices[out] = order[j];
      }
    }
}

}  // namespace jetplan::kernels::cpu
