// TopK on the GPU: one block of 256 threads per row (an (outer, inner) pair) picks the k
// elements in k rounds. The twin's order is strict and total (kernels/cpu/float_ranking.h: NaN
// above every number, ties by lower index), so round r's element is the first, in that order,
// of those after round r - 1's: each thread scans its elements of the row for that, then a block
// reduction in a fixed tree picks one. The rows and their order are the twin's exactly, for any
// values. O(k * axis / 256) a row: meant for k of a detector's queries (hundreds) over axes of
// tens of thousands. FP16 or FP32 values, Int64 indices. Twin: kernels/cpu/top_k.cc.
#include <cuda_fp16.h>

#include "kernels/cpu/float_ranking.h"
#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/top_k.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kTopKThreads = 256;

struct Candidate {
  float value;
  int64_t index;  // -1: none
};

// a before b in the twin's order (largest: the larger first; smallest: the smaller first; equal
// ranks by lower index). A missing candidate comes after every element.
__device__ __forceinline__ bool precedes(const Candidate& a, const Candidate& b, bool largest) {
  if (b.index < 0) return a.index >= 0;
  if (a.index < 0) return false;
  if (cpu::same_rank(a.value, b.value)) return a.index < b.index;
  return largest ? cpu::ranks_above(a.value, b.value) : cpu::ranks_above(b.value, a.value);
}

__device__ __forceinline__ Candidate first_of(Candidate a, Candidate b, bool largest) {
  return precedes(b, a, largest) ? b : a;
}

// The block's first candidate (every thread gets it). shared: kTopKThreads / 32 candidates.
__device__ Candidate block_first(Candidate c, bool largest, Candidate* shared) {
  for (int s = 16; s > 0; s >>= 1) {
    Candidate o;
    o.value = __shfl_xor_sync(0xffffffffu, c.value, s);
    o.index = __shfl_xor_sync(0xffffffffu, c.index, s);
    c = first_of(c, o, largest);
  }
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) shared[warp] = c;
  __syncthreads();
  Candidate best = shared[0];
  for (int w = 1; w < kTopKThreads / 32; ++w) best = first_of(best, shared[w], largest);
  __syncthreads();  // shared is reused by the next round
  return best;
}

template <typename T>
__device__ void top_k(const StepPointers& ptrs, const TopKParams& p) {
  __shared__ Candidate shared[kTopKThreads / 32];
  if (blockDim.x != kTopKThreads || blockDim.y != 1 || blockDim.z != 1 || p.axis < 1 ||
      p.inner < 1 || p.k < 0 || p.k > p.axis)
    return;
  const T* x = static_cast<const T*>(ptrs.in[0]);
  T* values = static_cast<T*>(ptrs.out[0]);
  auto* indices = static_cast<int64_t*>(ptrs.out[1]);
  for (int64_t row = blockIdx.x; row < p.outer * p.inner; row += gridDim.x) {
    const int64_t o = row / p.inner, in = row % p.inner;
    const T* xr = x + o * p.axis * p.inner + in;  // element j at xr[j * inner]
    Candidate prev{0.f, -1};  // round r - 1's pick; none before round 0
    for (int64_t r = 0; r < p.k; ++r) {
      Candidate mine{0.f, -1};
      for (int64_t j = threadIdx.x; j < p.axis; j += kTopKThreads) {
        const Candidate e{load_float(xr, j * p.inner), j};
        if ((prev.index < 0 || precedes(prev, e, p.largest)) && precedes(e, mine, p.largest))
          mine = e;
      }
      prev = block_first(mine, p.largest, shared);
      if (threadIdx.x == 0) {
        const int64_t out = (o * p.k + r) * p.inner + in;
        store_float(values, out, prev.value);
        indices[out] = prev.index;
      }
    }
  }
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_HALF_AND_FLOAT_KERNELS(jp_top_k, TopKParams, jetplan::kernels::cuda::top_k)
