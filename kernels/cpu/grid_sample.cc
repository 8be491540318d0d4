#include "kernels/grid_sample.h"

namespace jetplan::kernels::cpu {

// Per image and sampling position: the taps of every dim once, then each channel's plane sampled
// with them (grid_sample_math, the kernels' own math).
void grid_sample(const GridSampleParams& p, const float* x, const float* grid, float* y) {
  const int64_t positions = grid_sample_positions(p), plane = grid_sample_plane(p);
  grid_sample_math::Taps taps[kGridSampleMaxSpatial];
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t pos = 0; pos < positions; ++pos) {
      grid_sample_math::position_taps(p, grid, n, pos, taps);
      for (int64_t c = 0; c < p.channels; ++c) {
        const float* xc = x + (n * p.channels + c) * plane;
        y[(n * p.channels + c) * positions + pos] =
            grid_sample_math::sample(p, taps, [xc](int64_t offset) { return xc[offset]; });
      }
    }
}

}  // namespace jetplan::kernels::cpu
