// The Binary family on the GPU (numpy broadcasting by strides), FP16 and FP32 storage, FP32
// arithmetic with binary_value and the fused activation_value (kernels/scalar_ops.h). Twin:
// kernels/cpu/binary.cc.
#include <cuda_fp16.h>

#include "kernels/binary.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void binary(const StepPointers& ptrs, const BinaryParams& p) {
  const T* a = static_cast<const T*>(ptrs.in[0]);
  const T* b = static_cast<const T*>(ptrs.in[1]);
  T* y = static_cast<T*>(ptrs.out[0]);
  int64_t count = 1;
  for (int32_t d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int32_t d = p.rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      ia += c * p.a_strides[d];
      ib += c * p.b_strides[d];
    }
    store_float(y, i,
                activation_value(p.act, binary_value(p.op, load_float(a, ia), load_float(b, ib))));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::BinaryParams;
using jetplan::kernels::cuda::StepPointers;

JP_HALF_AND_FLOAT_KERNELS(jp_binary, BinaryParams, jetplan::kernels::cuda::binary)
