// The detector post-processing on the GPU (kernels/detect_postprocess.h): decode a thread per
// cell, an ordered compaction of the candidates in one block, a rank per candidate by counting
// (no sort, no atomics: each rank is a count over the same total order std::sort uses in the CPU
// twin), and the greedy NMS sweep in one block. Equal to the twin bit for bit: the decode and IoU
// are the header's functions with explicit fmaf calls and detect_exp.
#include "kernels/cuda/device_math.cuh"
#include "kernels/detect_postprocess.h"

using jetplan::kernels::Detection;
using jetplan::kernels::DetectParams;
using jetplan::kernels::DetectWorkspace;
using jetplan::kernels::cuda::DetectArgs;

namespace {

struct DeviceWorkspace {
  float* boxes;
  float* scores;
  int32_t* order;
  int32_t* count;
  Detection* ranked;
  unsigned char* suppressed;
};

__device__ __forceinline__ DeviceWorkspace parts(const DetectArgs& a, const DetectParams& p) {
  const DetectWorkspace w = jetplan::kernels::detect_workspace(p);
  auto* base = static_cast<unsigned char*>(a.workspace);
  return {reinterpret_cast<float*>(base + w.boxes), reinterpret_cast<float*>(base + w.scores),
          reinterpret_cast<int32_t*>(base + w.order), reinterpret_cast<int32_t*>(base + w.count),
          reinterpret_cast<Detection*>(base + w.ranked), base + w.suppressed};
}

}  // namespace

extern "C" __global__ void jp_detect_decode(DetectArgs args, const DetectParams p) {
  namespace k = jetplan::kernels;
  const DeviceWorkspace ws = parts(args, p);
  const int64_t cells = k::detect_cells(p);
  for (int64_t cell = k::cuda::global_thread(); cell < cells; cell += k::cuda::global_threads())
    k::detect_cell_candidates(p, args.head, cell, ws.boxes, ws.scores);
}

// Each thread owns a contiguous run of pairs: it counts its candidates, thread 0 turns the
// counts into starting offsets (1024 adds: not worth a parallel scan), each writes its run's
// candidates from its offset. The order is the index order, as the twin's loop.
extern "C" __global__ void __launch_bounds__(jetplan::kernels::cuda::kDetectCompactBlock)
    jp_detect_compact(DetectArgs args, const DetectParams p) {
  constexpr int32_t kThreads = static_cast<int32_t>(jetplan::kernels::cuda::kDetectCompactBlock);
  __shared__ int32_t offset[kThreads + 1];
  const DeviceWorkspace ws = parts(args, p);
  const int64_t pairs = jetplan::kernels::detect_pairs(p);
  const int64_t run = (pairs + kThreads - 1) / kThreads;
  const int32_t t = static_cast<int32_t>(threadIdx.x);
  const int64_t begin = run * t, end = begin + run < pairs ? begin + run : pairs;
  int32_t mine = 0;
  for (int64_t i = begin; i < end; ++i) mine += ws.scores[i] >= 0.f ? 1 : 0;
  offset[t + 1] = mine;
  __syncthreads();
  if (t == 0) {
    offset[0] = 0;
    for (int32_t u = 1; u <= kThreads; ++u) offset[u] += offset[u - 1];
    ws.count[0] = offset[kThreads];
  }
  __syncthreads();
  int32_t at = offset[t];
  for (int64_t i = begin; i < end; ++i)
    if (ws.scores[i] >= 0.f) ws.order[at++] = static_cast<int32_t>(i);
}

extern "C" __global__ void jp_detect_rank(DetectArgs args, const DetectParams p) {
  namespace k = jetplan::kernels;
  const DeviceWorkspace ws = parts(args, p);
  const int32_t candidates = ws.count[0];
  for (int64_t t = k::cuda::global_thread(); t < candidates; t += k::cuda::global_threads()) {
    const int32_t i = ws.order[t];
    const float s = ws.scores[i];
    int32_t rank = 0;
    for (int32_t u = 0; u < candidates; ++u) {
      const int32_t j = ws.order[u];
      rank += k::detect_ranks_before(ws.scores[j], j, s, i) ? 1 : 0;
    }
    if (rank >= p.max_candidates) continue;
    const float* b = ws.boxes + static_cast<int64_t>(i / p.classes) * 4;
    ws.ranked[rank] = Detection{b[0], b[1], b[2], b[3], s, i % p.classes, i};
  }
}

// The twin's sweep: candidate i, if not suppressed, is kept (thread 0 writes it out) and the
// block marks the later candidates of its class it suppresses; a barrier between candidates.
extern "C" __global__ void __launch_bounds__(jetplan::kernels::cuda::kDetectBlock)
    jp_detect_nms(DetectArgs args, const DetectParams p) {
  const DeviceWorkspace ws = parts(args, p);
  const int32_t m = ws.count[0] < p.max_candidates ? ws.count[0] : p.max_candidates;
  for (int32_t j = threadIdx.x; j < m; j += blockDim.x) ws.suppressed[j] = 0;
  __syncthreads();
  int32_t kept = 0;  // the same in every thread
  for (int32_t i = 0; i < m && kept < p.max_detections; ++i) {
    const bool keep = ws.suppressed[i] == 0;
    __syncthreads();  // everyone has read suppressed[i] before anyone writes more
    if (!keep) continue;
    const Detection d = ws.ranked[i];
    if (threadIdx.x == 0) args.out[kept] = d;
    ++kept;
    for (int32_t j = i + 1 + static_cast<int32_t>(threadIdx.x); j < m; j += blockDim.x)
      if (ws.ranked[j].cls == d.cls && jetplan::kernels::detect_suppresses(d, ws.ranked[j],
                                                                           p.iou_threshold))
        ws.suppressed[j] = 1;
    __syncthreads();
  }
  if (threadIdx.x == 0) args.out_count[0] = kept;
}
