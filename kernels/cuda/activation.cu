// The Activation family on the GPU, FP16 and FP32 storage, FP32 arithmetic with
// activation_value (kernels/scalar_ops.h). Twin: kernels/cpu/activation.cc.
#include <cuda_fp16.h>

#include "kernels/activation.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void activation(const StepPointers& ptrs, const ActivationParams& p) {
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* y = static_cast<T*>(ptrs.out[0]);
  for (int64_t i = global_thread(); i < p.count; i += global_threads()) {
    store_float(y, i, activation_value(p.act, load_float(x, i)));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::ActivationParams;
using jetplan::kernels::cuda::StepPointers;

JP_HALF_AND_FLOAT_KERNELS(jp_activation, ActivationParams, jetplan::kernels::cuda::activation)
