// Where on the GPU (numpy broadcasting by strides): moves elements of p.elem_bytes (1, 2, 4 and
// 8 as one access, other sizes byte by byte), bit-exact for any dtype. Twin: kernels/cpu/where.cc.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/element_copy.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/where.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ void where_kernel(const StepPointers& ptrs, const WhereParams& p) {
  const auto* cond = static_cast<const unsigned char*>(ptrs.in[0]);
  const auto* xs = static_cast<const unsigned char*>(ptrs.in[1]);
  const auto* ys = static_cast<const unsigned char*>(ptrs.in[2]);
  auto* out = static_cast<unsigned char*>(ptrs.out[0]);
  const int64_t count = dense_count(p.rank, p.out_dims);
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const unsigned char* src = where_source(p, i, cond, xs, ys);
    copy_elem(out + i * p.elem_bytes, src, p.elem_bytes);
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_where, WhereParams, jetplan::kernels::cuda::where_kernel)
