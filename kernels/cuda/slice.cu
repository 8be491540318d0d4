// Slice on the GPU: moves elements of elem_bytes (1, 2, 4 or 8) and never looks at the values,
// so one kernel serves every dtype. Twin: kernels/cpu/slice.cc.
#include <cstdint>

#include "kernels/cuda/byte_units.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/slice.h"

namespace jetplan::kernels::cuda {
namespace {

// Slice: one output element per thread; x element starts[d] + c[d] * steps[d] along each dim.
template <int N>
__device__ void slice(const SliceParams& p, const void* x, void* y) {
  using T = typename Unit<N>::T;
  const T* s = static_cast<const T*>(x);
  T* d = static_cast<T*>(y);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, off = 0, stride = 1;
    for (int32_t k = p.rank - 1; k >= 0; --k) {
      const int64_t c = rest % p.out_dims[k];
      rest /= p.out_dims[k];
      off += (p.starts[k] + c * p.steps[k]) * stride;
      stride *= p.x_dims[k];
    }
    d[i] = s[off];
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::SliceParams;
using jetplan::kernels::cuda::StepPointers;
namespace jk = jetplan::kernels::cuda;

extern "C" __global__ void jp_slice(StepPointers ptrs, const SliceParams p) {
  jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger();
  switch (p.elem_bytes) {  // an element size, not an enum: other sizes are refused at selection
    case 1: jk::slice<1>(p, ptrs.in[0], ptrs.out[0]); break;
    case 2: jk::slice<2>(p, ptrs.in[0], ptrs.out[0]); break;
    case 4: jk::slice<4>(p, ptrs.in[0], ptrs.out[0]); break;
    case 8: jk::slice<8>(p, ptrs.in[0], ptrs.out[0]); break;
    default: break;
  }
}
