// The Binary family on the GPU (numpy broadcasting by strides), FP16 and FP32 storage, FP32
// arithmetic with binary_value and the fused activation_value (kernels/scalar_ops.h). Twin:
// kernels/cpu/binary.cc.
#include <cuda_fp16.h>

#include "kernels/binary.h"
#include "kernels/cuda/elementwise_loops.cuh"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T>
__device__ void binary(const StepPointers& ptrs, const BinaryParams& p) {
  broadcast2<T, T>(ptrs, p, [&p](float a, float b) {
    return activation_value(p.act, binary_value(p.op, a, b));
  });
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_binary, BinaryParams, jetplan::kernels::cuda::binary)
