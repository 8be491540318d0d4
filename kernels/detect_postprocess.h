// A YOLO-style detector's grid head to boxes: decode every cell, keep the (cell, class) pairs
// that score at least the threshold, rank them, per-class greedy non-maximum suppression, the
// best max_detections out. CPU twin kernels/cpu/detect_postprocess.cc, CUDA kernels
// kernels/cuda/detect_postprocess.cu; both call the decode and IoU functions below, whose
// multiply-adds are explicit fmaf calls and whose exp is detect_exp (not the platform's), so
// the two sides compute the same bits and keep the same boxes. No product is left for a
// compiler to contract into an addition: the others feed an fmaf, a division or a comparison,
// and ldexpf's scaling is mul.rn on the device (never fused) and a library call on the host.
//
// Not a plan op family (not in kernels/op_families.def, no plan holds it): applications call it
// through the runtime's public API (jp_detect_boxes, runtime/include/jetplan/jetplan.h) on the
// output of a detector plan. The runtime checks the params (detect_params_valid's rules); the
// kernels trust them.
//
// The head (tests/accuracy/train_procedural.py's detector, anchor-free, one scale): per cell
// (gx, gy) of a grid_w x grid_h grid, 5 + classes channels: objectness logit, centre offsets
// dx, dy (logits), log width and log height (in strides), class logits. Decoded:
//   centre = ((gx, gy) + sigmoid(dx, dy)) * stride, size = exp(log size) * stride,
//   box = centre -/+ size / 2 clipped to [0, image_width] x [0, image_height],
//   score(class) = sigmoid(objectness) * softmax(class logits)[class].
// A candidate is a (cell, class) with score >= score_threshold (a NaN score never is); its index
// is cell * classes + class, cell = gy * grid_w + gx.
//
// Order and ties: candidates are ranked by score descending, then index ascending (a strict
// total order, so ranking is deterministic); the best max_candidates go on. NMS sweeps them in
// that order; a candidate is kept unless a kept one of the same class overlaps it with
// IoU > iou_threshold (equal does not suppress). The kept ones come out in the same order, at
// most max_detections.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace jetplan::kernels {

struct DetectParams {
  int32_t grid_w = 0, grid_h = 0;
  int32_t classes = 0;
  bool channels_last = false;  // head [grid_h, grid_w, 5 + classes] instead of [5 + classes, ..]
  float stride = 1.f;          // input pixels per cell
  float image_w = 0.f, image_h = 0.f;  // boxes are clipped to [0, image_w] x [0, image_h]
  float score_threshold = 0.f;          // in [0, 1]
  float iou_threshold = 0.f;            // in [0, 1]
  int32_t max_candidates = 0;           // >= 1: ranked candidates NMS looks at
  int32_t max_detections = 0;           // >= 1
};

// One box in input pixels (continuous coordinates: x0 <= x1, area (x1 - x0) * (y1 - y0)).
// Same layout as the C API's jp_detection.
struct Detection {
  float x0, y0, x1, y1;
  float score;
  int32_t cls;
  int32_t index;  // the candidate's index: cell * classes + class
};

JP_HD_INLINE int64_t detect_cells(const DetectParams& p) {
  return static_cast<int64_t>(p.grid_w) * p.grid_h;
}
JP_HD_INLINE int64_t detect_pairs(const DetectParams& p) { return detect_cells(p) * p.classes; }

// e^x from fmaf and ldexpf only (Cody-Waite reduction by ln 2, Cephes' degree-6 polynomial;
// within 2 ulps of e^x), so the host and the device agree bit for bit. NaN stays NaN; past the
// float range it is 0 or inf.
JP_HD_INLINE float detect_exp(float x) {
  if (x != x) return x;
  if (x > 88.5f) return INFINITY;
  if (x < -103.f) return 0.f;
  const float n = floorf(fmaf(x, 1.44269504088896341f, 0.5f));
  float r = fmaf(n, -0.693359375f, x);  // ln 2 in two parts: n * hi is exact
  r = fmaf(n, 2.12194440e-4f, r);
  float q = 1.9875691500e-4f;
  q = fmaf(q, r, 1.3981999507e-3f);
  q = fmaf(q, r, 8.3334519073e-3f);
  q = fmaf(q, r, 4.1665795894e-2f);
  q = fmaf(q, r, 1.6666665459e-1f);
  q = fmaf(q, r, 5.0000001201e-1f);
  const float e = fmaf(q, r * r, r) + 1.f;
  // Two steps of 2^(n/2): n down to -150 would underflow 2^n itself.
  const int32_t half = static_cast<int32_t>(n) / 2;
  return ldexpf(ldexpf(e, half), static_cast<int32_t>(n) - half);
}

JP_HD_INLINE float detect_sigmoid(float x) { return 1.f / (1.f + detect_exp(-x)); }

// v clipped to [0, hi] by comparisons, not fminf/fmaxf (which may keep either zero of -0 and +0,
// differently on each side): a NaN or -0 becomes +0, so the bits agree.
JP_HD_INLINE float detect_clip(float v, float hi) { return !(v > 0.f) ? 0.f : (v > hi ? hi : v); }

// Channel k of cell (gx, gy) of the head.
JP_HD_INLINE float detect_head_at(const DetectParams& p, const float* head, int64_t cell,
                                  int32_t k) {
  return p.channels_last ? head[cell * (5 + p.classes) + k] : head[k * detect_cells(p) + cell];
}

// The box of `cell` (x0, y0, x1, y1) and the scores of its classes (scores[classes]).
JP_HD_INLINE void detect_decode_cell(const DetectParams& p, const float* head, int64_t cell,
                                     float box[4], float* scores) {
  const float gx = static_cast<float>(cell % p.grid_w), gy = static_cast<float>(cell / p.grid_w);
  const float cx = (gx + detect_sigmoid(detect_head_at(p, head, cell, 1))) * p.stride;
  const float cy = (gy + detect_sigmoid(detect_head_at(p, head, cell, 2))) * p.stride;
  const float w = detect_exp(detect_head_at(p, head, cell, 3)) * p.stride;
  const float h = detect_exp(detect_head_at(p, head, cell, 4)) * p.stride;
  box[0] = detect_clip(fmaf(w, -0.5f, cx), p.image_w);
  box[1] = detect_clip(fmaf(h, -0.5f, cy), p.image_h);
  box[2] = detect_clip(fmaf(w, 0.5f, cx), p.image_w);
  box[3] = detect_clip(fmaf(h, 0.5f, cy), p.image_h);
  float top = detect_head_at(p, head, cell, 5);
  for (int32_t c = 1; c < p.classes; ++c) top = fmaxf(top, detect_head_at(p, head, cell, 5 + c));
  float sum = 0.f;  // in class order on both sides
  for (int32_t c = 0; c < p.classes; ++c) {
    scores[c] = detect_exp(detect_head_at(p, head, cell, 5 + c) - top);
    sum += scores[c];
  }
  const float objectness = detect_sigmoid(detect_head_at(p, head, cell, 0));
  for (int32_t c = 0; c < p.classes; ++c) scores[c] = objectness * (scores[c] / sum);
}

// Decodes `cell` into boxes[cell * 4 ..] and scores[cell * classes ..] (workspace arrays), then
// marks the pairs below the threshold (NaN included) with -1: what both sides rank.
JP_HD_INLINE void detect_cell_candidates(const DetectParams& p, const float* head, int64_t cell,
                                         float* boxes, float* scores) {
  float* s = scores + cell * p.classes;
  detect_decode_cell(p, head, cell, boxes + cell * 4, s);
  for (int32_t c = 0; c < p.classes; ++c)
    if (!(s[c] >= p.score_threshold)) s[c] = -1.f;
}

// Candidate a ranks before candidate b.
JP_HD_INLINE bool detect_ranks_before(float score_a, int32_t index_a, float score_b,
                                      int32_t index_b) {
  return score_a > score_b || (score_a == score_b && index_a < index_b);
}

// True when kept box a suppresses box b of the same class: IoU(a, b) > threshold. Boxes that do
// not overlap (or have no area) never suppress. In float, the union as one explicit fmaf chain.
JP_HD_INLINE bool detect_suppresses(const Detection& a, const Detection& b, float threshold) {
  const float ix = fminf(a.x1, b.x1) - fmaxf(a.x0, b.x0);
  const float iy = fminf(a.y1, b.y1) - fmaxf(a.y0, b.y0);
  if (!(ix > 0.f) || !(iy > 0.f)) return false;
  const float inter = ix * iy;
  const float wa = a.x1 - a.x0, ha = a.y1 - a.y0, wb = b.x1 - b.x0, hb = b.y1 - b.y0;
  const float uni = fmaf(-ix, iy, fmaf(wa, ha, wb * hb));
  if (!(uni > 0.f)) return false;
  return inter / uni > threshold;
}

// The workspace both sides use, one after the other, each part 16-byte aligned:
//   boxes float[cells * 4], scores float[pairs] (a pair below the threshold holds -1),
//   order int32[pairs] (candidate indices), count int32[4], ranked Detection[max_candidates],
//   suppressed uint8[max_candidates].
struct DetectWorkspace {
  size_t boxes, scores, order, count, ranked, suppressed, bytes;
};

JP_HD_INLINE size_t detect_align16(size_t n) { return (n + 15) & ~static_cast<size_t>(15); }

JP_HD_INLINE DetectWorkspace detect_workspace(const DetectParams& p) {
  DetectWorkspace w;
  const size_t cells = static_cast<size_t>(detect_cells(p));
  const size_t pairs = static_cast<size_t>(detect_pairs(p));
  const size_t cand = static_cast<size_t>(p.max_candidates);
  w.boxes = 0;
  w.scores = w.boxes + detect_align16(cells * 4 * sizeof(float));
  w.order = w.scores + detect_align16(pairs * sizeof(float));
  w.count = w.order + detect_align16(pairs * sizeof(int32_t));
  w.ranked = w.count + 16;
  w.suppressed = w.ranked + detect_align16(cand * sizeof(Detection));
  w.bytes = w.suppressed + detect_align16(cand);
  return w;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// head: the grid head of one image (5 + classes channels per cell, see above). workspace:
// detect_workspace(p).bytes, 16-byte aligned, garbage before and after. out: p.max_detections
// entries. All borrowed for the call. Returns the number of detections written.
int32_t detect_postprocess(const DetectParams& p, const float* head, void* workspace,
                           Detection* out);

}  // namespace jetplan::kernels::cpu

// The CUDA kernels, launched in this order on one stream with the same args and params:
//   jp_detect_decode   any grid, kDetectBlock threads: a thread per cell, grid-stride; writes
//                      boxes and scores.
//   jp_detect_compact  ONE block of kDetectCompactBlock threads: the candidates' indices in index
//                      order into order[], their number into count[0].
//   jp_detect_rank     any grid, kDetectBlock threads: each candidate counts the candidates
//                      ranking before it (O(candidates^2) compares: meant for the hundreds to
//                      few thousands a score threshold lets through) and, when that rank is
//                      below max_candidates, writes itself to ranked[rank].
//   jp_detect_nms      ONE block of kDetectBlock threads: the greedy sweep; writes out[] and
//                      out_count[0].
namespace jetplan::kernels::cuda {
struct DetectArgs {
  const float* head;    // device memory
  void* workspace;      // detect_workspace(p).bytes of device memory, 16-byte aligned
  Detection* out;       // max_detections entries
  int32_t* out_count;   // one word
};
constexpr const char* kDetectDecodeKernel = "jp_detect_decode";
constexpr const char* kDetectCompactKernel = "jp_detect_compact";
constexpr const char* kDetectRankKernel = "jp_detect_rank";
constexpr const char* kDetectNmsKernel = "jp_detect_nms";
constexpr uint32_t kDetectBlock = 256;
constexpr uint32_t kDetectCompactBlock = 1024;
}  // namespace jetplan::kernels::cuda
