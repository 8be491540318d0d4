// Concat on the GPU: moves elements of elem_bytes and never looks at the values, so one kernel
// serves every dtype. Twin: kernels/cpu/concat.cc.
#include <cstdint>

#include "kernels/concat.h"
#include "kernels/cuda/byte_units.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

// y [outer, sum(axis_len), inner]: thread per unit of y, its input found by the running sum of
// axis_len (in order: up to 64 inputs). Units are the widest power of two dividing every
// input's pointer and inner * elem_bytes, so rows of every input split into whole units.
template <int N>
__device__ void concat_units(const StepPointers& ptrs, const ConcatParams& p, int64_t row_units) {
  using T = typename Unit<N>::T;
  int64_t total = 0;
  for (int32_t k = 0; k < p.num_inputs; ++k) total += p.axis_len[k];
  const int64_t y_row = total * row_units;  // units per outer index in y
  const int64_t count = p.outer * y_row;
  T* d = static_cast<T*>(ptrs.out[0]);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t o = i / y_row;
    int64_t r = i - o * y_row;
    int32_t k = 0;
    while (k + 1 < p.num_inputs && r >= p.axis_len[k] * row_units) {
      r -= p.axis_len[k] * row_units;
      ++k;
    }
    d[i] = static_cast<const T*>(ptrs.in[k])[o * p.axis_len[k] * row_units + r];
  }
}

__device__ void concat(const StepPointers& ptrs, const ConcatParams& p) {
  const int64_t row_bytes = p.inner * p.elem_bytes;
  uint64_t bits = static_cast<uint64_t>(row_bytes) | reinterpret_cast<uintptr_t>(ptrs.out[0]);
  for (int32_t k = 0; k < p.num_inputs && k < kMaxConcatInputs; ++k)
    if (p.axis_len[k] > 0) bits |= reinterpret_cast<uintptr_t>(ptrs.in[k]);
  if (p.num_inputs < 1 || p.num_inputs > kMaxConcatInputs || row_bytes <= 0) return;
  move_in_units(bits, row_bytes, [&](auto unit, int64_t row_units) {
    concat_units<decltype(unit)::value>(ptrs, p, row_units);
  });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_concat, ConcatParams, jetplan::kernels::cuda::concat)
