// GridSample on the GPU: a thread per (image, sampling position, run of kChannelRun channels)
// computes the position's taps once (grid_sample_math, the CPU twin's own math: the same taps,
// weights and float32 sums) and samples each of its channels' planes with them. Adjacent
// threads take adjacent positions, so Y's writes and the grid's reads coalesce; X is read where
// the grid points. X in Float16 or Float32 (summed in float32, Y rounded once), the grid Float32
// (a coordinate of 500 in Float16 would move by a quarter pixel). Twin:
// kernels/cpu/grid_sample.cc.
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/grid_sample.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int64_t kChannelRun = 8;  // kernels/cuda/grid_sample_select.cc counts the same runs

template <typename T>
__device__ void grid_sample_kernel(const StepPointers& ptrs, const GridSampleParams& p) {
  // What prepare checked, again: the plan is untrusted.
  if (p.spatial < 1 || p.spatial > kGridSampleMaxSpatial) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  const float* grid = static_cast<const float*>(ptrs.in[1]);
  T* y = static_cast<T*>(ptrs.out[0]);
  const int64_t positions = grid_sample_positions(p), plane = grid_sample_plane(p);
  const int64_t runs = (p.channels + kChannelRun - 1) / kChannelRun;
  const int64_t items = p.batch * runs * positions;
  grid_sample_math::Taps taps[kGridSampleMaxSpatial];
  for (int64_t item = global_thread(); item < items; item += global_threads()) {
    const int64_t pos = item % positions;
    const int64_t run = (item / positions) % runs;
    const int64_t n = item / positions / runs;
    grid_sample_math::position_taps(p, grid, n, pos, taps);
    const int64_t c_end = p.channels < (run + 1) * kChannelRun ? p.channels : (run + 1) * kChannelRun;
    for (int64_t c = run * kChannelRun; c < c_end; ++c) {
      const T* xc = x + (n * p.channels + c) * plane;
      const float v = grid_sample_math::sample(
          p, taps, [xc](int64_t offset) { return load_float<T>(xc, offset); });
      store_float<T>(y, (n * p.channels + c) * positions + pos, v);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_grid_sample, GridSampleParams,
                          jetplan::kernels::cuda::grid_sample_kernel)
