// Copy (a byte copy: Reshape, Flatten, Identity) on the GPU. Twin: kernels/cpu/copy.cc.
#include <cstdint>

#include "kernels/copy.h"
#include "kernels/cuda/byte_units.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <int N>
__device__ void copy_units(const void* x, void* y, int64_t units) {
  using T = typename Unit<N>::T;
  const T* s = static_cast<const T*>(x);
  T* d = static_cast<T*>(y);
  for (int64_t i = global_thread(); i < units; i += global_threads()) d[i] = s[i];
}

// Disjoint ranges copy in parallel with the widest unit both pointers and the size allow. Ranges
// that partly overlap (the twin's memmove) are copied by one thread in the safe direction: no
// plan the converter writes does that, so it only has to be right, not fast.
__device__ void copy_bytes(const void* x, void* y, int64_t bytes) {
  const uintptr_t s = reinterpret_cast<uintptr_t>(x), d = reinterpret_cast<uintptr_t>(y);
  if (s == d || bytes <= 0) return;
  const uint64_t n = static_cast<uint64_t>(bytes);
  if ((s < d && d - s < n) || (d < s && s - d < n)) {
    if (global_thread() != 0) return;
    const uint8_t* src = static_cast<const uint8_t*>(x);
    uint8_t* dst = static_cast<uint8_t*>(y);
    if (d < s) {
      for (uint64_t i = 0; i < n; ++i) dst[i] = src[i];
    } else {
      for (uint64_t i = n; i-- > 0;) dst[i] = src[i];
    }
    return;
  }
  move_in_units(s | d | n, bytes, [&](auto unit, int64_t units) {
    copy_units<decltype(unit)::value>(x, y, units);
  });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::CopyParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void jp_copy(StepPointers ptrs, const CopyParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  jetplan::kernels::cuda::copy_bytes(ptrs.in[0], ptrs.out[0], p.bytes);
}
