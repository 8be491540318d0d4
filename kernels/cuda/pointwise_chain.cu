// The Pointwise family on the GPU: a fused chain of float elementwise ops run as a small program
// per output element (twin: kernels/cpu/pointwise_chain.cc). FP16 or FP32 storage, FP32
// arithmetic, each op with its standalone kernel's formula (elementwise_math.cuh,
// device_math.cuh). The program is the same for every thread, so its branches never diverge.
//
// A thread runs V consecutive output elements through each instruction before the next: the
// decode of an instruction and the index arithmetic are paid once for V elements. The V = 4
// variants need the innermost output dim to be a multiple of 4 (the selector checks it; with
// any other params they still stay in bounds: the innermost coordinate is computed per group of
// 4 and every element index is checked against the count).
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/elementwise_math.cuh"
#include "kernels/cuda/launch.h"

namespace jetplan::kernels::cuda {
namespace {

template <typename T, int V>
__device__ void pointwise_chain(const StepPointers& ptrs, const PointwiseParams& p) {
  const int32_t n = p.num_instrs;
  if (n < 1 || n > kMaxPointwiseInstrs || p.num_inputs < 0 || p.num_inputs > kMaxPointwiseInputs)
    return;  // plan load refuses such params
  const int32_t rank = p.rank;
  int64_t count = 1;
  for (int32_t d = 0; d < rank; ++d) count *= p.out_dims[d];
  const int64_t inner = rank > 0 ? p.out_dims[rank - 1] : 1;
  T* y = static_cast<T*>(ptrs.out[0]);
  float reg[kMaxPointwiseInstrs][V];
  for (int64_t g = global_thread(); g * V < count; g += global_threads()) {
    const int64_t first = g * V;
    int64_t offset[kMaxPointwiseInputs];
    for (int32_t k = 0; k < p.num_inputs; ++k) offset[k] = 0;
    int64_t rest = first;
    for (int32_t d = rank - 1; d >= 0; --d) {
      const int64_t c = rest % p.out_dims[d];
      rest /= p.out_dims[d];
      for (int32_t k = 0; k < p.num_inputs; ++k) offset[k] += c * p.in_strides[k][d];
    }
    // Elements first + 1 .. first + V - 1 share all coordinates but the innermost, which the
    // V > 1 variants are only selected for (inner % V == 0); `valid` bounds them anyway.
    const int64_t inner_at = V > 1 ? first % inner : 0;
    for (int32_t r = 0; r < n; ++r) {
      const PointwiseInstr in = p.program[r];
      switch (in.kind) {
        case PointwiseInstrKind::kLoad: {
          const int k = in.op < kMaxPointwiseInputs ? in.op : 0;
          const T* x = static_cast<const T*>(ptrs.in[k]);
          const int64_t step = rank > 0 ? p.in_strides[k][rank - 1] : 0;
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const bool valid = first + v < count && inner_at + v < inner;
            reg[r][v] = valid ? load_float(x, offset[k] + v * step) : 0.f;
          }
          break;
        }
        case PointwiseInstrKind::kBinary: {
          const BinaryOp op = static_cast<BinaryOp>(in.op);
#pragma unroll
          for (int v = 0; v < V; ++v) reg[r][v] = binary_op(op, reg[in.a][v], reg[in.b][v]);
          break;
        }
        case PointwiseInstrKind::kUnary: {
          const UnaryOp op = static_cast<UnaryOp>(in.op);
#pragma unroll
          for (int v = 0; v < V; ++v) reg[r][v] = unary_float(op, reg[in.a][v]);
          break;
        }
        case PointwiseInstrKind::kActivation:
#pragma unroll
          for (int v = 0; v < V; ++v) reg[r][v] = apply_activation(in.act, reg[in.a][v]);
          break;
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (first + v < count && inner_at + v < inner) store_float(y, first + v, reg[n - 1][v]);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::PointwiseParams;
using jetplan::kernels::cuda::StepPointers;
namespace k = jetplan::kernels::cuda;

extern "C" __global__ void jp_pointwise_chain_f16(StepPointers ptrs, const PointwiseParams p) {
  k::pointwise_chain<__half, 1>(ptrs, p);
}
extern "C" __global__ void jp_pointwise_chain_f16_x4(StepPointers ptrs, const PointwiseParams p) {
  k::pointwise_chain<__half, 4>(ptrs, p);
}
extern "C" __global__ void jp_pointwise_chain_f32(StepPointers ptrs, const PointwiseParams p) {
  k::pointwise_chain<float, 1>(ptrs, p);
}
extern "C" __global__ void jp_pointwise_chain_f32_x4(StepPointers ptrs, const PointwiseParams p) {
  k::pointwise_chain<float, 4>(ptrs, p);
}
