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
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const OperandOffsets off = operand_offsets(i, p.rank, p.out_dims, p.a_strides, p.b_strides);
    store_float(y, i, activation_value(p.act, binary_value(p.op, load_float(a, off.a),
                                                           load_float(b, off.b))));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::BinaryParams;
using jetplan::kernels::cuda::StepPointers;

JP_HALF_AND_FLOAT_KERNELS(jp_binary, BinaryParams, jetplan::kernels::cuda::binary)
