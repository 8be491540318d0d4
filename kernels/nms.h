// The Nms family (NonMaxSuppression): parameters and CPU twin (kernels/cpu/nms.cc); CUDA kernel
// in kernels/cuda/nms.cu.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace jetplan::kernels {

// boxes [batch, num_boxes, 4] as [y1, x1, y2, x2] (any two opposite corners) or, with
// center_point_box, [x_center, y_center, width, height]; scores [batch, num_classes, num_boxes].
// Per (batch, class): boxes whose score is > score_threshold (every box without
// has_score_threshold; a NaN score never) taken by score descending, ties by lower box index;
// a box is kept unless its IoU with a box already kept for this (batch, class) is
// > iou_threshold; at most max_output_per_class kept (negative counts as 0).
// Output selected: int64 [nms_capacity(p), 3] rows (batch, class, box), in (batch, class,
// selection) order; the number of rows is known only at run time: the kernel returns it (and
// writes it to a count word), rows past it are -1. max_output_per_class, iou_threshold and
// score_threshold are ONNX inputs: plan load requires them constant.
struct NmsParams {
  int64_t batch = 1;
  int64_t num_classes = 1;
  int64_t num_boxes = 0;
  int64_t max_output_per_class = 0;
  float iou_threshold = 0.f;
  float score_threshold = 0.f;
  bool has_score_threshold = false;
  bool center_point_box = false;
};

// Rows of the selected output: every (batch, class) can keep min(num_boxes, max_output_per_class).
constexpr int64_t nms_capacity(const NmsParams& p) {
  const int64_t per_class = p.max_output_per_class < 0 ? 0
                            : p.max_output_per_class < p.num_boxes ? p.max_output_per_class
                                                                   : p.num_boxes;
  return p.batch * p.num_classes * per_class;
}

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// selected holds nms_capacity(p) rows of 3 int64. Returns the number of selected rows and,
// where count is not null, writes it to *count too: that word is how a device twin, which
// returns nothing to the host, hands the count on (see the runtime's dynamic-output note).
// workspace: nms_workspace_bytes(p) bytes, 8-byte aligned, caller-owned, garbage before and after.
int64_t nms_workspace_bytes(const NmsParams& p);
int64_t non_max_suppression(const NmsParams& p, const float* boxes, const float* scores,
                            void* workspace, int64_t* selected, int64_t* count);

}  // namespace jetplan::kernels::cpu

namespace jetplan::kernels::cuda {

// The CUDA kernel's workspace (kernels/cuda/nms.cu), in 8-byte words, for a grid of `blocks`:
// the arrival count (word 0), each (batch, class) segment's kept count and output row offset,
// its kept box indices (min(num_boxes, max_output_per_class) a segment), and, unless the sort
// keys fit the block's shared memory, one row of nms_sort_keys(p) keys per block. The runtime
// zeroes it before each launch (the arrival count must start at 0).
struct NmsWorkspace {
  int64_t counts, offsets, kept, keys, words;
};

// Sort keys a segment needs: num_boxes rounded up to a power of two (at least 1).
JP_HD constexpr int64_t nms_sort_keys(const NmsParams& p) {
  int64_t n = 1;
  while (n < p.num_boxes) n *= 2;
  return n;
}

JP_HD constexpr NmsWorkspace nms_workspace(const NmsParams& p, int64_t blocks, bool keys_in_shared) {
  const int64_t segments = p.batch * p.num_classes;
  const int64_t per_class = p.max_output_per_class < 0 ? 0
                            : p.max_output_per_class < p.num_boxes ? p.max_output_per_class
                                                                   : p.num_boxes;
  NmsWorkspace w{1, 1 + segments, 1 + 2 * segments, 0, 0};
  w.keys = w.kept + segments * per_class;
  w.words = w.keys + (keys_in_shared ? 0 : blocks * nms_sort_keys(p));
  return w;
}

}  // namespace jetplan::kernels::cuda

// CUDA kernel of kernels/cuda/nms.cu, gathered into the variant table by kernels/cuda/variants.cc
// (columns: kernels/cuda/variants.h): Float32 boxes and scores, Int64 rows and count; a block of
// 256 threads; the workspace zeroed before each launch.
#define JP_CUDA_VARIANTS_nms(X, F) X(F, jp_nms_f32, kF32, 256, kI64, 0, true)
