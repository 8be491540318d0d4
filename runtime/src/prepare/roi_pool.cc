// RoiPool: ONNX RoiAlign (X [N, C, H, W], rois [R, 4], batch_indices [R]) and MaxRoiPool (X and
// rois [R, 5]) into Y [R, C, out_h, out_w]; X and Y Float32 (or Float16 in CUDA plans), rois
// Float32 and batch indices Int64 in every plan.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

Status check_dtypes(const jp_plan& plan, const PreparedStep& s, const TensorInfo& x,
                    const TensorInfo& y) {
  const bool cuda = plan.backend == JP_BACKEND_CUDA;
  if (x.dtype != fb::DType::Float32 && !(cuda && x.dtype == fb::DType::Float16)) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': RoiPool of %s X is not supported (%s)", s.name,
                fb::EnumNameDType(x.dtype), cuda ? "Float32 or Float16" : "Float32");
  }
  return check_same_dtype(s, x, y);
}

}  // namespace

Status prepare_roi_pool(const jp_plan& plan, const fb::RoiPoolParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_enum<kernels::kRoiPoolModeCount>(*s, p.mode(), "RoiPool mode"));
  const bool align = p.mode() != fb::RoiPoolMode::Max;
  JP_RETURN_IF_ERROR(check_arity(*s, align ? "RoiAlign" : "MaxRoiPool", align ? 3 : 2, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& rois = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_dtypes(plan, *s, x, y));
  JP_RETURN_IF_ERROR(check_role_dtype(*s, rois, fb::DType::Float32, "rois"));
  if (x.rank != 4 || y.rank != 4) return invalid(*s, "X and the output must be 4-D");
  if (channels_last(x) || channels_last(y)) {
    return invalid(*s, "RoiPool reads and writes NCHW tensors");
  }
  const int64_t r = y.dims[0];
  const int64_t want_rois[2] = {r, align ? 4 : 5};
  JP_RETURN_IF_ERROR(check_dims(*s, rois, 2, want_rois, "rois"));
  if (align) {
    const TensorInfo& batch_indices = input_at(plan, *s, 2);
    JP_RETURN_IF_ERROR(check_role_dtype(*s, batch_indices, fb::DType::Int64, "batch_indices"));
    JP_RETURN_IF_ERROR(check_dims(*s, batch_indices, 1, &r, "batch_indices"));
  }
  if (y.dims[1] != x.dims[1]) return invalid(*s, "output must be [R, C, out_h, out_w] of X's C");
  const bool y_empty = r == 0 || y.dims[1] == 0 || y.dims[2] == 0 || y.dims[3] == 0;
  // Every box reads some pixel of its image (a zero-weight one too): there must be one.
  if (!y_empty && (x.dims[2] < 1 || x.dims[3] < 1)) {
    return invalid(*s, "X has a spatial dim of 0 to pool from");
  }
  if (p.sampling_ratio() < 0 || p.sampling_ratio() > kernels::kRoiAlignMaxGrid) {
    return invalid(*s, "sampling_ratio out of range");
  }
  kernels::RoiPoolParams& k = fresh_params(&s->params.roi_pool);
  k.mode = static_cast<kernels::RoiPoolMode>(p.mode());
  k.half_pixel = p.half_pixel();
  k.sampling_ratio = p.sampling_ratio();
  k.spatial_scale = p.spatial_scale();
  k.batch = x.dims[0];
  k.channels = x.dims[1];
  k.height = x.dims[2];
  k.width = x.dims[3];
  k.rois = r;
  k.out_h = y.dims[2];
  k.out_w = y.dims[3];
  return JP_OK;
}

void run_roi_pool_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::RoiPoolParams& p = s.params.roi_pool;
  const int64_t* batch_indices =
      p.mode == kernels::RoiPoolMode::kMax ? nullptr
                                           : static_cast<const int64_t*>(in(s, tensors, 2));
  kernels::cpu::roi_pool(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1), batch_indices,
                         out_f32(s, tensors));
}

}  // namespace jetplan::rt
