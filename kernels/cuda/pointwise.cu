// Pointwise families on the GPU: Activation and Binary (numpy broadcasting by strides), FP16 and
// FP32. Twins: kernels/cpu/activation.cc, kernels/cpu/binary.cc.
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/elementwise_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void activation(const StepPointers& ptrs, const ActivationParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  for (int64_t i = global_thread(); i < p.count; i += global_threads()) {
    store_float(y, i, apply_activation(p.act, load_float(x, i)));
  }
}

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
    store_float(y, i, apply_activation(p.act, binary_op(p.op, load_float(a, ia), load_float(b, ib))));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ActivationParams;
using jetplan::kernels::BinaryParams;
using jetplan::kernels::cuda::StepPointers;

extern "C" __global__ void jp_activation_f16(StepPointers ptrs, const ActivationParams p) {
  jetplan::kernels::cuda::activation<__half>(ptrs, p);
}
extern "C" __global__ void jp_activation_f32(StepPointers ptrs, const ActivationParams p) {
  jetplan::kernels::cuda::activation<float>(ptrs, p);
}
extern "C" __global__ void jp_binary_f16(StepPointers ptrs, const BinaryParams p) {
  jetplan::kernels::cuda::binary<__half>(ptrs, p);
}
extern "C" __global__ void jp_binary_f32(StepPointers ptrs, const BinaryParams p) {
  jetplan::kernels::cuda::binary<float>(ptrs, p);
}
