// Nms: ONNX NonMaxSuppression; the selected [class, box] triples and their count (Int64).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_nms(const jp_plan& plan, const fb::NmsParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_kernel_dtypes(plan, *s, "Nms", {fb::DType::Float32, fb::DType::Float32},
                                         {fb::DType::Int64, fb::DType::Int64}));
  const TensorInfo& boxes = input_at(plan, *s, 0);
  const TensorInfo& scores = input_at(plan, *s, 1);
  const TensorInfo& selected = output_at(plan, *s, 0);
  const TensorInfo& count = output_at(plan, *s, 1);
  if (boxes.rank != 3 || boxes.dims[2] != 4 || scores.rank != 3 ||
      scores.dims[0] != boxes.dims[0] || scores.dims[2] != boxes.dims[1]) {
    return invalid(*s, "boxes and scores must be [B, N, 4] and [B, C, N]");
  }
  kernels::NmsParams& k = fresh_params(&s->params.nms);
  k.batch = boxes.dims[0];
  k.num_classes = scores.dims[1];
  k.num_boxes = boxes.dims[1];
  k.max_output_per_class = p.max_output_per_class();
  k.iou_threshold = p.iou_threshold();
  k.score_threshold = p.score_threshold();
  k.has_score_threshold = p.has_score_threshold();
  k.center_point_box = p.center_point_box();
  if (selected.rank != 2 || selected.dims[1] != 3 || selected.dims[0] != kernels::nms_capacity(k)) {
    return invalid(*s, "selected must be [B * C * min(N, max_output_per_class), 3]");
  }
  if (count.elements != 1) return invalid(*s, "the count output must hold one element");
  return check_workspace(plan, *s, kernels::cpu::nms_workspace_bytes(k));
}

void run_nms_cpu(const PreparedStep& s, void* const* tensors, void* workspace) {
  kernels::cpu::non_max_suppression(s.params.nms, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                                    workspace, out_i64(s, tensors, 0), out_i64(s, tensors, 1));
}

}  // namespace jetplan::rt
