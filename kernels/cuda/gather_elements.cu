// GatherElements on the GPU: one thread per output element reads its index, resolves it as the
// twin does (negative counts from the end, out of range gives zeros) and copies the data element
// at the output's coordinates with the axis coordinate replaced. Moves elements of 1, 2, 4 or 8
// bytes and never looks at the values, so one kernel serves every dtype. Twin:
// kernels/cpu/gather_elements.cc.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/gather_elements.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void gather_elements_of(const StepPointers& ptrs, const GatherElementsParams& p) {
  const T* data = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  int64_t strides[kMaxRank];  // data's, dense
  int64_t stride = 1;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= p.data_dims[d];
  }
  const int64_t len = p.data_dims[p.axis], count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t k = p.index_dtype == DType::kInt32 ? static_cast<const int32_t*>(ptrs.in[1])[i]
                                               : static_cast<const int64_t*>(ptrs.in[1])[i];
    if (k < 0) k += len;
    if (k < 0 || k >= len) {
      y[i] = T{};
      continue;
    }
    int64_t rest = i, offset = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      offset += (d == p.axis ? k : c) * strides[d];
    }
    y[i] = data[offset];
  }
}

__device__ void gather_elements(const StepPointers& ptrs, const GatherElementsParams& p) {
  // What selection checked, again: the plan is untrusted.
  if (p.rank < 1 || p.rank > kMaxRank || p.axis < 0 || p.axis >= p.rank) return;
  if (p.index_dtype != DType::kInt32 && p.index_dtype != DType::kInt64) return;
  switch (p.elem_bytes) {
    case 1: gather_elements_of<uint8_t>(ptrs, p); break;
    case 2: gather_elements_of<uint16_t>(ptrs, p); break;
    case 4: gather_elements_of<uint32_t>(ptrs, p); break;
    case 8: gather_elements_of<uint64_t>(ptrs, p); break;
    default: break;
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_gather_elements, GatherElementsParams, jetplan::kernels::cuda::gather_elements)
