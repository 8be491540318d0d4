// ArgMax and ArgMin on the GPU: one thread per output (an (outer, inner) pair) walks the axis in
// order, ranking as the twin does (kernels/cpu/float_ranking.h: NaN is the extreme for both
// kinds, ties keep the first index or, with select_last_index, the last), so the indices are the
// twin's for the same values. Adjacent threads read adjacent elements where inner > 1 (a
// segmentation head's argmax over channels); a classifier's row (inner 1) is one thread's walk.
// FP16 or FP32 x (compared as float), Int64 y. Twin: kernels/cpu/arg_reduce.cc.
#include <cuda_fp16.h>

#include "kernels/arg_reduce.h"
#include "kernels/cpu/float_ranking.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void arg_reduce(const StepPointers& ptrs, const ArgReduceParams& p) {
  if (p.axis < 1 || p.inner < 1) return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  auto* y = static_cast<int64_t*>(ptrs.out[0]);
  const bool is_max = p.kind == ArgKind::kMax;
  for (int64_t i = global_thread(); i < p.outer * p.inner; i += global_threads()) {
    const T* xr = x + (i / p.inner) * p.axis * p.inner + i % p.inner;  // element j: xr[j * inner]
    int64_t best = 0;
    float b = load_float(xr, 0);
    for (int64_t j = 1; j < p.axis; ++j) {
      const float v = load_float(xr, j * p.inner);
      const bool better = is_max ? cpu::ranks_above(v, b) : cpu::ranks_below(v, b);
      if (better || (p.select_last_index && cpu::same_rank(v, b))) {
        best = j;
        b = v;
      }
    }
    y[i] = best;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_arg_reduce, ArgReduceParams, jetplan::kernels::cuda::arg_reduce)
