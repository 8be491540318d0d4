#include "kernels/roi_pool.h"

namespace jetplan::kernels::cpu {

// Every output element on its own (roi_pool_math::output, the kernels' own math): the box and
// its samples are recomputed per channel, which keeps the loop plain.
void roi_pool(const RoiPoolParams& p, const float* x, const float* rois,
              const int64_t* batch_indices, float* y) {
  const int64_t n = roi_pool_outputs(p);
  for (int64_t i = 0; i < n; ++i)
    y[i] = roi_pool_math::output(p, rois, batch_indices, i,
                                 [x](int64_t offset) { return x[offset]; });
}

}  // namespace jetplan::kernels::cpu
