#include "kernels/arg_reduce.h"

#include "kernels/cpu/float_ranking.h"

namespace jetplan::kernels::cpu {

void arg_reduce(const ArgReduceParams& p, const float* x, int64_t* y) {
  const bool is_max = p.kind == ArgKind::kMax;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t in = 0; in < p.inner; ++in) {
      const float* xr = x + o * p.axis * p.inner + in;  // element j at xr[j * inner]
      int64_t best = 0;
      for (int64_t j = 1; j < p.axis; ++j) {
        const float v = xr[j * p.inner], b = xr[best * p.inner];
        // NaN is the extreme for both kinds, as numpy's argmin/argmax have it.
        const bool better = is_max ? ranks_above(v, b) : ranks_below(v, b);
        if (better || (p.select_last_index && same_rank(v, b))) best = j;
      }
      y[o * p.inner + in] = best;
    }
}

}  // namespace jetplan::kernels::cpu
