// MaxUnpool on the GPU, deterministic and in one cooperative launch. y[i] = x[k] for the largest
// k whose index is i (the twin's "last wins"), zero where none is. Phase 1: every y element
// zeroed, and each k's atomicMax of k + 1 into the winner word of its target (the workspace,
// zeroed by the runtime before the launch). A grid-wide barrier. Phase 2: each k whose winner
// word holds k + 1 copies x[k]'s bytes to its target. Every block of a cooperative grid is
// resident, so the barrier (an arrival counter after the winner words) cannot deadlock; the
// selector keeps x and y under 2^31 - 1 elements, so the words fit an int32.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/max_unpool.h"

namespace jetplan::kernels::cuda {
namespace {

// Every block arrives once; each waits until all have. Writes before it are visible after it.
__device__ void grid_barrier(unsigned int* arrived) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(arrived, 1u);
    while (*static_cast<volatile unsigned int*>(arrived) < gridDim.x) __nanosleep(64);
    __threadfence();
  }
  __syncthreads();
}

template <typename T>
__device__ void max_unpool_kernel(const StepPointers& ptrs, const MaxUnpoolParams& p) {
  const auto* x = static_cast<const T*>(ptrs.in[0]);
  const auto* indices = static_cast<const int64_t*>(ptrs.in[1]);
  auto* y = static_cast<T*>(ptrs.out[0]);
  // The plan's workspace must hold the winner words and the counter: a plan is untrusted.
  const uint64_t need = (uint64_t(p.y_count) + 1) * sizeof(int32_t);
  if (ptrs.workspace == nullptr || ptrs.workspace_bytes < need) return;
  auto* winner = static_cast<int32_t*>(ptrs.workspace);
  auto* arrived = reinterpret_cast<unsigned int*>(winner + p.y_count);
  for (int64_t i = global_thread(); i < p.y_count; i += global_threads()) y[i] = T{};
  for (int64_t k = global_thread(); k < p.x_count; k += global_threads()) {
    const int64_t at = max_unpool_target(p, indices, k);
    if (at >= 0) atomicMax(winner + at, int32_t(k + 1));
  }
  grid_barrier(arrived);
  for (int64_t k = global_thread(); k < p.x_count; k += global_threads()) {
    const int64_t at = max_unpool_target(p, indices, k);
    if (at >= 0 && winner[at] == int32_t(k + 1)) y[at] = x[k];
  }
}

__device__ void max_unpool_b2(const StepPointers& ptrs, const MaxUnpoolParams& p) {
  max_unpool_kernel<uint16_t>(ptrs, p);
}
__device__ void max_unpool_b4(const StepPointers& ptrs, const MaxUnpoolParams& p) {
  max_unpool_kernel<uint32_t>(ptrs, p);
}
__device__ void max_unpool_b8(const StepPointers& ptrs, const MaxUnpoolParams& p) {
  max_unpool_kernel<uint64_t>(ptrs, p);
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_max_unpool_b2, MaxUnpoolParams, jetplan::kernels::cuda::max_unpool_b2)
JP_STEP_KERNEL(jp_max_unpool_b4, MaxUnpoolParams, jetplan::kernels::cuda::max_unpool_b4)
JP_STEP_KERNEL(jp_max_unpool_b8, MaxUnpoolParams, jetplan::kernels::cuda::max_unpool_b8)
