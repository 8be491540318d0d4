// The Pointwise family on the GPU: a fused chain of float elementwise ops run as a small program
// per output element (twin: kernels/cpu/pointwise.cc). FP16 or FP32 storage, FP32 arithmetic,
// each op with its standalone kernel's formula (kernels/scalar_ops.h). The program is the same
// for every thread, so its branches never diverge.
//
// Registers are named at run time, so they cannot live in machine registers; a per-thread
// array would go to local memory, which for a full SM is more than L1 holds. They live in
// shared memory instead, one column per thread ([register][element][thread]: no bank
// conflicts), which fixes the block at kBlock threads (the variant rows say so; the kernel
// does nothing with another block). The input offsets are unrolled over the input slots, so
// they stay in machine registers.
//
// A thread runs V consecutive output elements through each instruction before the next: the
// decode of an instruction and the index arithmetic are paid once for V elements. The V = 4
// variants need the innermost output dim to be a multiple of 4 (the selector checks it; with
// other params they still stay in bounds: every element is checked against the count and the
// innermost extent).
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/pointwise.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kBlock = 128;

// Coordinates of element `first` dotted with the strides of every input the program has (the
// slots past num_inputs stay 0); `inner_at` gets its innermost coordinate. Index is uint32_t
// when every extent fits (most tensors), which makes the divisions several times cheaper.
template <typename Index>
__device__ __forceinline__ void input_offsets(const PointwiseParams& p, int64_t first,
                                              int64_t* off, int64_t* inner_at) {
  Index rest = static_cast<Index>(first);
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    const Index dim = static_cast<Index>(p.out_dims[d]);
    const Index q = rest / dim;
    const int64_t c = static_cast<int64_t>(rest - q * dim);
    rest = q;
    if (d == p.rank - 1) *inner_at = c;
#pragma unroll
    for (int k = 0; k < kMaxPointwiseInputs; ++k)
      if (k < p.num_inputs) off[k] += c * p.in_strides[k][d];
  }
}

template <typename T, int V>
__device__ void pointwise_chain(const StepPointers& ptrs, const PointwiseParams& p) {
  __shared__ float reg[kMaxPointwiseInstrs][V][kBlock];
  const int32_t n = p.num_instrs;
  if (blockDim.x * blockDim.y * blockDim.z != kBlock || n < 1 || n > kMaxPointwiseInstrs ||
      p.num_inputs < 0 || p.num_inputs > kMaxPointwiseInputs)
    return;  // load refuses such launches and params
  const int tid = threadIdx.x;
  int64_t count = 1;
  for (int32_t d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  const int64_t inner = p.rank > 0 ? p.out_dims[p.rank - 1] : 1;
  const bool small = count <= 0xffffffffll;
  T* y = static_cast<T*>(ptrs.out[0]);
  for (int64_t g = global_thread(); g * V < count; g += global_threads()) {
    const int64_t first = g * V;
    int64_t off[kMaxPointwiseInputs];
#pragma unroll
    for (int k = 0; k < kMaxPointwiseInputs; ++k) off[k] = 0;
    // Elements first + 1 .. first + V - 1 share every coordinate but the innermost (V > 1 is
    // selected only when inner % V == 0); `valid` bounds them anyway.
    int64_t inner_at = 0;
    if (small) {
      input_offsets<uint32_t>(p, first, off, &inner_at);
    } else {
      input_offsets<uint64_t>(p, first, off, &inner_at);
    }
    float last[V];  // the previous instruction's result, which most instructions read
    for (int32_t r = 0; r < n; ++r) {
      const PointwiseInstr in = p.program[r];
      float a[V], b[V];
      if (in.kind != PointwiseInstrKind::kLoad) {
#pragma unroll
        for (int v = 0; v < V; ++v) a[v] = in.a == r - 1 ? last[v] : reg[in.a][v][tid];
      }
      switch (in.kind) {
        case PointwiseInstrKind::kLoad: {
          const int k = in.op < kMaxPointwiseInputs ? in.op : 0;
          int64_t base = 0;
#pragma unroll
          for (int j = 0; j < kMaxPointwiseInputs; ++j) base = j == k ? off[j] : base;
          const T* x = static_cast<const T*>(ptrs.in[k]);
          const int64_t step = p.rank > 0 ? p.in_strides[k][p.rank - 1] : 0;
#pragma unroll
          for (int v = 0; v < V; ++v) {
            const bool valid = first + v < count && inner_at + v < inner;
            last[v] = valid ? load_float(x, base + v * step) : 0.f;
          }
          break;
        }
        case PointwiseInstrKind::kBinary: {
          const BinaryOp op = static_cast<BinaryOp>(in.op);
#pragma unroll
          for (int v = 0; v < V; ++v) b[v] = in.b == r - 1 ? last[v] : reg[in.b][v][tid];
#pragma unroll
          for (int v = 0; v < V; ++v) last[v] = binary_value(op, a[v], b[v]);
          break;
        }
        case PointwiseInstrKind::kUnary: {
          const UnaryOp op = static_cast<UnaryOp>(in.op);
#pragma unroll
          for (int v = 0; v < V; ++v) last[v] = unary_value(op, a[v]);
          break;
        }
        case PointwiseInstrKind::kActivation:
#pragma unroll
          for (int v = 0; v < V; ++v) last[v] = activation_value(in.act, a[v]);
          break;
      }
#pragma unroll
      for (int v = 0; v < V; ++v) reg[r][v][tid] = last[v];
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (first + v < count && inner_at + v < inner) store_float(y, first + v, last[v]);
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

using jetplan::kernels::PointwiseParams;
using jetplan::kernels::cuda::StepPointers;
namespace k = jetplan::kernels::cuda;

// The chain over elements of T, V of them per thread.
#define JP_POINTWISE_CHAIN(name, T, V)                                        \
  extern "C" __global__ void __launch_bounds__(k::kBlock)                     \
      name(StepPointers ptrs, const PointwiseParams p) {                      \
    jetplan::kernels::cuda::pdl_wait(); jetplan::kernels::cuda::pdl_trigger(); \
    k::pointwise_chain<T, V>(ptrs, p);                                        \
  }
JP_POINTWISE_CHAIN(jp_pointwise_chain_f16, __half, 1)
JP_POINTWISE_CHAIN(jp_pointwise_chain_f16_x4, __half, 4)
JP_POINTWISE_CHAIN(jp_pointwise_chain_f32, float, 1)
JP_POINTWISE_CHAIN(jp_pointwise_chain_f32_x4, float, 4)
#undef JP_POINTWISE_CHAIN
