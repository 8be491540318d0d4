// NonMaxSuppression on the GPU, bit for bit with the twin (kernels/cpu/nms.cc). One launch:
//   1. Each block takes (batch, class) segments in turn. Its candidates (score not NaN and, with
//      a threshold, above it) become 64-bit keys, the score's order-preserving bits (descending,
//      -0 as +0) over the box index, so one ascending bitonic sort gives the twin's order (score
//      descending, ties by lower index). The keys sit in dynamic shared memory when the selector
//      gave enough, else in the block's row of the workspace.
//   2. The greedy pass decides 256 sorted candidates a round: each thread checks its candidate
//      against the boxes kept in earlier rounds and against the earlier candidates of its round
//      (a 256-bit mask), then thread 0 walks the round in order, keeping a candidate unless a
//      kept one suppresses it, up to max_output_per_class. The IoU test is the twin's, in double
//      with correctly rounded operations (never contracted into an fma), so every decision,
//      the boundary IoU == threshold included, is the twin's.
//   3. The last block to finish (an arrival count in the zeroed workspace) writes the rows in
//      (batch, class, selection) order, -1 past them, and the count.
// Deterministic: the atomics only count arrivals and place unique keys that the sort orders.
#include <cstdint>

#include "kernels/cuda/device_math.cuh"
#include "kernels/cuda/launch.h"
#include "kernels/nms.h"

namespace jetplan::kernels::cuda {
namespace {

constexpr int kThreads = 256;        // = the candidates a greedy round decides
constexpr int kWords = kThreads / 64;
constexpr uint64_t kNoKey = ~uint64_t{0};

__device__ __forceinline__ uint32_t dynamic_shared_bytes() {
  uint32_t bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return bytes;
}

// Ascending in these bits is descending in score; -0 and +0 are one score.
__device__ __forceinline__ uint64_t sort_key(float score, int64_t index) {
  uint32_t u = __float_as_uint(score == 0.f ? 0.f : score);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // ascending in the score
  return (uint64_t{~u} << 32) | static_cast<uint32_t>(index);
}

__device__ __forceinline__ int64_t load_cg(const int64_t* p) {
  return __ldcg(reinterpret_cast<const long long*>(p));
}

struct Extent {
  double x_min, x_max, y_min, y_max;
};

// The twin's extent(): corner boxes by fminf/fmaxf of floats (exact), centre boxes in double.
__device__ __forceinline__ Extent extent(const float* b, bool center_point_box) {
  if (center_point_box) {
    const double half_w = __dmul_rn(b[2], 0.5), half_h = __dmul_rn(b[3], 0.5);
    return {__dsub_rn(b[0], half_w), __dadd_rn(b[0], half_w), __dsub_rn(b[1], half_h),
            __dadd_rn(b[1], half_h)};
  }
  return {fminf(b[1], b[3]), fmaxf(b[1], b[3]), fminf(b[0], b[2]), fmaxf(b[0], b[2])};
}

// The twin's suppresses(), operation for operation.
__device__ bool suppresses(const float* a, const float* b, const NmsParams& p) {
  const Extent ea = extent(a, p.center_point_box), eb = extent(b, p.center_point_box);
  const double ix_min = fmax(ea.x_min, eb.x_min), ix_max = fmin(ea.x_max, eb.x_max);
  if (ix_max <= ix_min) return false;
  const double iy_min = fmax(ea.y_min, eb.y_min), iy_max = fmin(ea.y_max, eb.y_max);
  if (iy_max <= iy_min) return false;
  const double inter = __dmul_rn(__dsub_rn(ix_max, ix_min), __dsub_rn(iy_max, iy_min));
  const double area_a = __dmul_rn(__dsub_rn(ea.x_max, ea.x_min), __dsub_rn(ea.y_max, ea.y_min));
  const double area_b = __dmul_rn(__dsub_rn(eb.x_max, eb.x_min), __dsub_rn(eb.y_max, eb.y_min));
  const double uni = __dsub_rn(__dadd_rn(area_a, area_b), inter);
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return __ddiv_rn(inter, uni) > static_cast<double>(p.iou_threshold);
}

// Sorts keys[0, n) ascending (n a power of two), the whole block taking part.
__device__ void bitonic_sort(uint64_t* keys, int64_t n) {
  for (int64_t k = 2; k <= n; k <<= 1) {
    for (int64_t j = k >> 1; j > 0; j >>= 1) {
      for (int64_t i = threadIdx.x; i < n; i += kThreads) {
        const int64_t partner = i ^ j;
        if (partner <= i) continue;
        const uint64_t a = keys[i], b = keys[partner];
        if ((a > b) == ((i & k) == 0)) {
          keys[i] = b;
          keys[partner] = a;
        }
      }
      __syncthreads();
    }
  }
}

struct Shared {
  uint64_t mask[kThreads][kWords];  // bit s of candidate t: candidate s of the round suppresses t
  bool covered[kThreads];           // suppressed by a box kept in an earlier round
  int64_t kept;                     // boxes kept for the segment so far
  int64_t candidates;
  bool last;
};

// One (batch, class) segment: its kept box indices into kept[0, count), the count returned.
__device__ int64_t select_segment(const NmsParams& p, int64_t segment, const float* boxes,
                                  const float* scores, uint64_t* keys, int64_t* kept,
                                  int64_t per_class, Shared& sh) {
  const int64_t b = segment / p.num_classes;
  const float* s = scores + segment * p.num_boxes;
  const float* batch_boxes = boxes + b * p.num_boxes * 4;
  if (threadIdx.x == 0) {
    sh.candidates = 0;
    sh.kept = 0;
  }
  __syncthreads();
  // The candidates' keys, packed at the front in any order (the sort orders them).
  for (int64_t i = threadIdx.x; i < p.num_boxes; i += kThreads) {
    const float v = s[i];
    if (isnan(v) || (p.has_score_threshold && !(v > p.score_threshold))) continue;
    const auto at = static_cast<int64_t>(atomicAdd(reinterpret_cast<unsigned long long*>(
                                                       &sh.candidates), 1ull));
    keys[at] = sort_key(v, i);
  }
  __syncthreads();
  const int64_t candidates = sh.candidates;
  int64_t n = 1;
  while (n < candidates) n *= 2;
  for (int64_t i = candidates + threadIdx.x; i < n; i += kThreads) keys[i] = kNoKey;
  __syncthreads();
  bitonic_sort(keys, n);
  for (int64_t first = 0; first < candidates && sh.kept < per_class; first += kThreads) {
    const int64_t t = first + threadIdx.x;
    const int64_t kept_before = sh.kept;
    uint64_t mask[kWords] = {};
    bool covered = true;  // past the candidates: never kept
    if (t < candidates) {
      const float* box = batch_boxes + static_cast<int64_t>(keys[t] & 0xffffffffu) * 4;
      covered = false;
      for (int64_t r = 0; r < kept_before && !covered; ++r)
        covered = suppresses(box, batch_boxes + kept[r] * 4, p);
      for (int64_t u = first; u < t && !covered; ++u)
        if (suppresses(box, batch_boxes + static_cast<int64_t>(keys[u] & 0xffffffffu) * 4, p))
          mask[(u - first) / 64] |= uint64_t{1} << ((u - first) % 64);
    }
    sh.covered[threadIdx.x] = covered;
    for (int w = 0; w < kWords; ++w) sh.mask[threadIdx.x][w] = mask[w];
    __syncthreads();
    if (threadIdx.x == 0) {
      uint64_t taken[kWords] = {};
      int64_t count = kept_before;
      for (int j = 0; j < kThreads && first + j < candidates && count < per_class; ++j) {
        if (sh.covered[j]) continue;
        bool keep = true;
        for (int w = 0; w < kWords; ++w) keep = keep && (sh.mask[j][w] & taken[w]) == 0;
        if (!keep) continue;
        taken[j / 64] |= uint64_t{1} << (j % 64);
        kept[count++] = static_cast<int64_t>(keys[first + j] & 0xffffffffu);
      }
      sh.kept = count;
    }
    __syncthreads();
  }
  return sh.kept;
}

__device__ void nms(const StepPointers& ptrs, const NmsParams& p) {
  __shared__ Shared sh;
  extern __shared__ uint64_t shared_keys[];
  if (blockDim.x != kThreads || blockDim.y != 1 || blockDim.z != 1 || p.num_boxes < 0 ||
      p.num_boxes > INT32_MAX || p.batch < 0 || p.num_classes < 0)
    return;
  const int64_t segments = p.batch * p.num_classes;
  const int64_t per_class = p.max_output_per_class < 0 ? 0
                            : p.max_output_per_class < p.num_boxes ? p.max_output_per_class
                                                                   : p.num_boxes;
  const int64_t n_keys = nms_sort_keys(p);
  const bool keys_in_shared =
      static_cast<uint64_t>(dynamic_shared_bytes()) >= static_cast<uint64_t>(n_keys) * 8;
  const NmsWorkspace w = nms_workspace(p, gridDim.x, keys_in_shared);
  if (ptrs.workspace == nullptr || ptrs.workspace_bytes < static_cast<uint64_t>(w.words) * 8)
    return;
  auto* ws = static_cast<int64_t*>(ptrs.workspace);
  uint64_t* keys = keys_in_shared ? shared_keys
                                  : reinterpret_cast<uint64_t*>(ws + w.keys) + blockIdx.x * n_keys;
  const auto* boxes = static_cast<const float*>(ptrs.in[0]);
  const auto* scores = static_cast<const float*>(ptrs.in[1]);
  for (int64_t segment = blockIdx.x; segment < segments; segment += gridDim.x) {
    const int64_t count = select_segment(p, segment, boxes, scores, keys,
                                         ws + w.kept + segment * per_class, per_class, sh);
    if (threadIdx.x == 0) ws[w.counts + segment] = count;
    __syncthreads();  // the keys and sh are the next segment's
  }
  // Arrive; the last block sees every other block's counts and kept indices.
  __threadfence();
  if (threadIdx.x == 0)
    sh.last = atomicAdd(reinterpret_cast<unsigned long long*>(ws), 1ull) == gridDim.x - 1;
  __syncthreads();
  if (!sh.last) return;
  __threadfence();
  if (threadIdx.x == 0) {
    int64_t rows = 0;
    for (int64_t g = 0; g < segments; ++g) {
      ws[w.offsets + g] = rows;
      rows += load_cg(&ws[w.counts + g]);
    }
    sh.candidates = rows;  // the total, reusing the field
  }
  __syncthreads();
  auto* selected = static_cast<int64_t*>(ptrs.out[0]);
  const int64_t rows = sh.candidates;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t g = warp; g < segments; g += kThreads / 32) {
    const int64_t offset = ws[w.offsets + g], count = load_cg(&ws[w.counts + g]);
    for (int64_t r = lane; r < count; r += 32) {
      int64_t* row = selected + (offset + r) * 3;
      row[0] = g / p.num_classes;
      row[1] = g % p.num_classes;
      row[2] = load_cg(&ws[w.kept + g * per_class + r]);
    }
  }
  for (int64_t i = rows * 3 + threadIdx.x; i < segments * per_class * 3; i += kThreads)
    selected[i] = -1;
  if (threadIdx.x == 0) *static_cast<int64_t*>(ptrs.out[1]) = rows;
}

}  // namespace
}  // namespace jetplan::kernels::cuda

JP_STEP_KERNEL(jp_nms_f32, NmsParams, jetplan::kernels::cuda::nms)
