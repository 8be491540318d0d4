// The Activation family on the GPU, FP16 and FP32 storage, FP32 arithmetic with
// activation_value (kernels/scalar_ops.h). Twin: kernels/cpu/activation.cc.
#include <cuda_fp16.h>

#include "kernels/activation.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/elementwise_loops.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void activation(const StepPointers& ptrs, const ActivationParams& p) {
  map_elements<T, T>(ptrs, p.count, [&p](float v) { return activation_value(p.act, v); });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_activation, ActivationParams, jetplan::kernels::cuda::activation)
