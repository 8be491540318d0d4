// QLinearMatMul on the GPU: one thread per output element (grid-stride), the exact integer sum
// over K and the twin's double requantization (kernels/cuda/quantized_math.cuh), so the bits
// agree with kernels/cpu/qlinear_matmul.cc. Inputs in ONNX's order: a, a_scale, a_zero_point,
// b, b_scale, b_zero_point, y_scale, y_zero_point.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/quantized_math.cuh"
#include "kernels/qlinear_matmul.h"

namespace jetplan::kernels::cuda {
namespace {

__device__ void qlinear_matmul(const StepPointers& ptrs, const QLinearMatMulParams& p) {
  const void* a = ptrs.in[0];
  const float* a_scale = static_cast<const float*>(ptrs.in[1]);
  const void* a_zp = ptrs.in[2];
  const void* b = ptrs.in[3];
  const float* b_scale = static_cast<const float*>(ptrs.in[4]);
  const void* b_zp = ptrs.in[5];
  const float y_scale = *static_cast<const float*>(ptrs.in[6]);
  const int32_t y_zp = load_q(p.y_type, ptrs.in[7], 0);
  const int64_t count = p.batch * p.M * p.N;
  for (int64_t i = global_thread(); i < count; i += global_threads()) {
    const int64_t n = i % p.N, m = (i / p.N) % p.M, bi = i / (p.N * p.M);
    const int64_t am = p.a_per_row ? m : 0, bn = p.b_per_column ? n : 0;
    const int32_t za = load_q(p.a_type, a_zp, am), zb = load_q(p.b_type, b_zp, bn);
    const int64_t a0 = bi * p.a_batch_stride + m * p.K, b0 = bi * p.b_batch_stride + n;
    int64_t acc = 0;
    for (int64_t k = 0; k < p.K; ++k)
      acc += int64_t{load_q(p.a_type, a, a0 + k) - za} * (load_q(p.b_type, b, b0 + k * p.N) - zb);
    store_q(p.y_type, ptrs.out[0], i,
            requantize_q(acc, multiplier_q(a_scale[am], b_scale[bn], y_scale), y_zp, p.y_type));
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_qlinear_matmul, QLinearMatMulParams, jetplan::kernels::cuda::qlinear_matmul)
