#include <algorithm>
#include <cmath>

#include "kernels/nms.h"

namespace jetplan::kernels::cpu {

namespace {

// A box as its x and y extents, min <= max.
struct Extent {
  double x_min, x_max, y_min, y_max;
};

Extent extent(const float* b, bool center_point_box) {
  if (center_point_box) {  // [x_center, y_center, width, height]
    const double half_w = b[2] / 2.0, half_h = b[3] / 2.0;
    return {b[0] - half_w, b[0] + half_w, b[1] - half_h, b[1] + half_h};
  }
  // [y1, x1, y2, x2], any two opposite corners.
  return {std::fmin(b[1], b[3]), std::fmax(b[1], b[3]), std::fmin(b[0], b[2]),
          std::fmax(b[0], b[2])};
}

// ONNX's reference rule: boxes that do not overlap, or have no area, never suppress. In double:
// the products of float coordinates are exact there, so the decision at iou == threshold does
// not depend on FMA contraction or evaluation order of a device twin that does the same.
bool suppresses(const float* a, const float* b, const NmsParams& p) {
  const Extent ea = extent(a, p.center_point_box), eb = extent(b, p.center_point_box);
  const double ix_min = std::fmax(ea.x_min, eb.x_min), ix_max = std::fmin(ea.x_max, eb.x_max);
  if (ix_max <= ix_min) return false;
  const double iy_min = std::fmax(ea.y_min, eb.y_min), iy_max = std::fmin(ea.y_max, eb.y_max);
  if (iy_max <= iy_min) return false;
  const double inter = (ix_max - ix_min) * (iy_max - iy_min);
  const double area_a = (ea.x_max - ea.x_min) * (ea.y_max - ea.y_min);
  const double area_b = (eb.x_max - eb.x_min) * (eb.y_max - eb.y_min);
  const double uni = area_a + area_b - inter;
  if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > static_cast<double>(p.iou_threshold);
}

}  // namespace

int64_t nms_workspace_bytes(const NmsParams& p) {
  return p.num_boxes * static_cast<int64_t>(sizeof(int64_t));
}

// Per (batch, class): the candidate box indices go into the workspace, std::sort (in place, a
// strict total order: score descending, then index) ranks them, and the greedy pass checks each
// against the boxes already selected for this class, which it reads back from the output.
int64_t non_max_suppression(const NmsParams& p, const float* boxes, const float* scores,
                            void* workspace, int64_t* selected, int64_t* count) {
  int64_t* order = static_cast<int64_t*>(workspace);
  const int64_t per_class = std::min(std::max<int64_t>(p.max_output_per_class, 0), p.num_boxes);
  int64_t rows = 0;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t c = 0; c < p.num_classes; ++c) {
      const float* s = scores + (b * p.num_classes + c) * p.num_boxes;
      const float* batch_boxes = boxes + b * p.num_boxes * 4;
      int64_t candidates = 0;
      for (int64_t i = 0; i < p.num_boxes; ++i) {
        if (std::isnan(s[i]) || (p.has_score_threshold && !(s[i] > p.score_threshold))) continue;
        order[candidates++] = i;
      }
      std::sort(order, order + candidates,
                [s](int64_t a, int64_t z) { return s[a] > s[z] || (s[a] == s[z] && a < z); });
      const int64_t first = rows;
      for (int64_t j = 0; j < candidates && rows - first < per_class; ++j) {
        const int64_t i = order[j];
        bool keep = true;
        for (int64_t r = first; r < rows && keep; ++r)
          keep = !suppresses(batch_boxes + i * 4, batch_boxes + selected[r * 3 + 2] * 4, p);
        if (!keep) continue;
        selected[rows * 3 + 0] = b;
        selected[rows * 3 + 1] = c;
        selected[rows * 3 + 2] = i;
        ++rows;
      }
    }
  for (int64_t i = rows * 3; i < nms_capacity(p) * 3; ++i) selected[i] = -1;
  if (count) *count = rows;
  return rows;
}

}  // namespace jetplan::kernels::cpu
