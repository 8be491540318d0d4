// CPU twin of the detector post-processing (kernels/detect_postprocess.h): the shared decode per
// cell, the candidates sorted by the shared total order (std::sort is enough: no two compare
// equal), then the greedy per-class sweep the CUDA kernel does with a block of threads.
#include <algorithm>

#include "kernels/detect_postprocess.h"

namespace jetplan::kernels::cpu {

int32_t detect_postprocess(const DetectParams& p, const float* head, void* workspace,
                           Detection* out) {
  const DetectWorkspace w = detect_workspace(p);
  auto* base = static_cast<unsigned char*>(workspace);
  auto* boxes = reinterpret_cast<float*>(base + w.boxes);
  auto* scores = reinterpret_cast<float*>(base + w.scores);
  auto* order = reinterpret_cast<int32_t*>(base + w.order);
  auto* ranked = reinterpret_cast<Detection*>(base + w.ranked);
  auto* suppressed = base + w.suppressed;
  const int64_t cells = detect_cells(p), pairs = detect_pairs(p);
  for (int64_t cell = 0; cell < cells; ++cell) detect_cell_candidates(p, head, cell, boxes, scores);
  int32_t candidates = 0;
  for (int64_t i = 0; i < pairs; ++i)
    if (scores[i] >= 0.f) order[candidates++] = static_cast<int32_t>(i);
  std::sort(order, order + candidates, [scores](int32_t a, int32_t b) {
    return detect_ranks_before(scores[a], a, scores[b], b);
  });
  const int32_t m = std::min(candidates, p.max_candidates);
  for (int32_t r = 0; r < m; ++r) {
    const int32_t i = order[r];
    const float* b = boxes + static_cast<int64_t>(i / p.classes) * 4;
    ranked[r] = Detection{b[0], b[1], b[2], b[3], scores[i], i % p.classes, i};
    suppressed[r] = 0;
  }
  int32_t kept = 0;
  for (int32_t i = 0; i < m && kept < p.max_detections; ++i) {
    if (suppressed[i] != 0) continue;
    out[kept++] = ranked[i];
    for (int32_t j = i + 1; j < m; ++j)
      if (suppressed[j] == 0 && ranked[j].cls == ranked[i].cls &&
          detect_suppresses(ranked[i], ranked[j], p.iou_threshold))
        suppressed[j] = 1;
  }
  return kept;
}

}  // namespace jetplan::kernels::cpu
