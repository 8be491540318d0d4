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
// they stay in machine registers. The result of each instruction is also kept in machine
// registers for the next one, which most instructions read.
//
// A thread runs V consecutive output elements through each instruction before the next: the
// decode of an instruction and the index arithmetic are paid once for V elements. The V = 4
// and V = 8 variants need the innermost output dim to be a multiple of V (the selector checks
// it; with other params they still stay in bounds: every element is checked against the count
// and the innermost extent). V = 8 (Float16) moves each input and the output in 16-byte loads
// and stores and keeps in shared memory only the registers read later than by the next
// instruction (Regs).
#include <cuda_fp16.h>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/pointwise.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kBlock = 128;
static_assert(kPointwiseSlotBytes == 8 * kBlock * sizeof(float), "a slot of the x8 kernel");

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

// Where a thread's registers live. V of 1 or 4: every register at its index in a static array
// of kMaxPointwiseInstrs slots. V of 8 (Float16 only, 16-byte loads and stores): only the
// registers pointwise_spilled() names, at their slot in the launch's dynamic shared memory
// (kPointwiseSlotBytes a slot), so a chain whose registers each feed the next instruction only
// needs none, and the static array would be 64 KiB.
template <int V>
struct Regs {
  static constexpr bool kSpilledOnly = V == 8;
  float* base;
  uint32_t spilled;  // kSpilledOnly
  int tid;
  __device__ __forceinline__ int slot(int r) const {
    return kSpilledOnly ? __popc(spilled & ((1u << r) - 1u)) : r;
  }
  __device__ __forceinline__ float& at(int r, int v) const {
    return base[(slot(r) * V + v) * kBlock + tid];
  }
  __device__ __forceinline__ bool kept(int r) const {
    return !kSpilledOnly || (spilled >> r & 1u) != 0;
  }
};

template <typename T, int V>
__device__ void pointwise_chain(const StepPointers& ptrs, const PointwiseParams& p) {
  static_assert(V != 8 || sizeof(T) == 2, "the eight-element kernel moves 16 bytes of halves");
  const int32_t n = p.num_instrs;
  if (blockDim.x * blockDim.y * blockDim.z != kBlock || n < 1 || n > kMaxPointwiseInstrs ||
      p.num_inputs < 0 || p.num_inputs > kMaxPointwiseInputs)
    return;  // load refuses such launches and params
  const int tid = threadIdx.x;
  Regs<V> regs{nullptr, 0u, tid};
  if constexpr (Regs<V>::kSpilledOnly) {
    extern __shared__ float spilled_regs[];
    regs.base = spilled_regs;
    regs.spilled = pointwise_spilled(p);
    if (__popc(regs.spilled) * kPointwiseSlotBytes > dynamic_smem_bytes())
      return;  // the launch gives too little shared memory (a plan is untrusted)
  } else {
    __shared__ float all_regs[kMaxPointwiseInstrs * V * kBlock];
    regs.base = all_regs;
  }
  int64_t count = 1;
  for (int32_t d = 0; d < p.rank; ++d) count *= p.out_dims[d];
  const int64_t inner = p.rank > 0 ? p.out_dims[p.rank - 1] : 1;
  const bool small = count <= 0xffffffffll;
  // V = 8 and the innermost dim a multiple of 8: a thread's elements are one 16-byte run of
  // the output, and of each input that walks that dim (the input's own elements there are
  // contiguous: load made every input dense), or one value that it broadcasts.
  const bool runs = V == 8 && inner % 8 == 0;
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
        for (int v = 0; v < V; ++v) a[v] = in.a == r - 1 ? last[v] : regs.at(in.a, v);
      }
      switch (in.kind) {
        case PointwiseInstrKind::kLoad: {
          const int k = in.op < kMaxPointwiseInputs ? in.op : 0;
          int64_t base = 0;
#pragma unroll
          for (int j = 0; j < kMaxPointwiseInputs; ++j) base = j == k ? off[j] : base;
          const T* x = static_cast<const T*>(ptrs.in[k]);
          const int64_t step = p.rank > 0 ? p.in_strides[k][p.rank - 1] : 0;
          if constexpr (V == 8) {
            if (runs && step == 1 && base % 8 == 0 &&
                reinterpret_cast<uintptr_t>(x + base) % 16 == 0) {
              load8(x + base, last);
              break;
            }
            if (runs && step == 0) {
              const float one = load_float(x, base);
#pragma unroll
              for (int v = 0; v < V; ++v) last[v] = one;
              break;
            }
          }
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
          for (int v = 0; v < V; ++v) b[v] = in.b == r - 1 ? last[v] : regs.at(in.b, v);
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
      if (regs.kept(r)) {
#pragma unroll
        for (int v = 0; v < V; ++v) regs.at(r, v) = last[v];
      }
    }
    if constexpr (V == 8) {
      if (runs) {
        store8(y + first, last);  // 16 bytes at once where y + first is aligned to them
        continue;
      }
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
JP_POINTWISE_CHAIN(jp_pointwise_chain_f16_x8, __half, 8)
JP_POINTWISE_CHAIN(jp_pointwise_chain_f32, float, 1)
JP_POINTWISE_CHAIN(jp_pointwise_chain_f32_x4, float, 4)
#undef JP_POINTWISE_CHAIN
