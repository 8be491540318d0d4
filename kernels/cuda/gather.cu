// Gather on the GPU: moves elements of elem_bytes and never looks at the values, so one kernel
// serves every dtype. Twin: kernels/cpu/gather.cc.
#include <cstdint>

#include "kernels/cuda/byte_units.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/gather.h"

namespace jetplan::kernels::cuda {
namespace {

// Gather: y [outer, num_indices, inner] in units of the widest power of two dividing the slab
// (inner * elem_bytes) and both pointers; an index outside [-axis_len, axis_len) gives zeros.
template <int N>
__device__ void gather_units(const StepPointers& ptrs, const GatherParams& p, int64_t row_units) {
  using T = typename Unit<N>::T;
  const T* s = static_cast<const T*>(ptrs.in[0]);
  T* d = static_cast<T*>(ptrs.out[0]);
  const int64_t count = p.outer * p.num_indices * row_units;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t u = i % row_units, j = (i / row_units) % p.num_indices,
                  o = i / (row_units * p.num_indices);
    int64_t k = p.index_dtype == DType::kInt32 ? static_cast<const int32_t*>(ptrs.in[1])[j]
                                               : static_cast<const int64_t*>(ptrs.in[1])[j];
    if (k < 0) k += p.axis_len;
    if (k >= 0 && k < p.axis_len) {
      d[i] = s[(o * p.axis_len + k) * row_units + u];
    } else {
      T zero;
      memset(&zero, 0, sizeof zero);
      d[i] = zero;
    }
  }
}

__device__ void gather(const StepPointers& ptrs, const GatherParams& p) {
  const int64_t row_bytes = p.inner * p.elem_bytes;
  if (row_bytes <= 0) return;
  if (p.index_dtype != DType::kInt32 && p.index_dtype != DType::kInt64) return;
  const uint64_t bits = static_cast<uint64_t>(row_bytes) |
                        reinterpret_cast<uintptr_t>(ptrs.in[0]) |
                        reinterpret_cast<uintptr_t>(ptrs.out[0]);
  // Spelled out rather than through move_in_units, which changes this kernel's SASS.
  switch (unit_bytes(bits)) {
    case 16: gather_units<16>(ptrs, p, row_bytes / 16); break;
    case 8: gather_units<8>(ptrs, p, row_bytes / 8); break;
    case 4: gather_units<4>(ptrs, p, row_bytes / 4); break;
    case 2: gather_units<2>(ptrs, p, row_bytes / 2); break;
    default: gather_units<1>(ptrs, p, row_bytes); break;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_gather, GatherParams, jetplan::kernels::cuda::gather)
