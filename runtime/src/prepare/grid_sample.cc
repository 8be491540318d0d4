// GridSample: X [N, C, *in] sampled at the grid's normalized coordinates into Y [N, C, *out]; X
// and Y Float32 (or Float16 in CUDA plans), the grid Float32 in every plan.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

Status check_dtypes(const jp_plan& plan, const PreparedStep& s, const TensorInfo& x,
                    const TensorInfo& grid, const TensorInfo& y) {
  const bool cuda = plan.backend == JP_BACKEND_CUDA;
  if (x.dtype != fb::DType::Float32 && !(cuda && x.dtype == fb::DType::Float16)) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': GridSample of %s X is not supported (%s)",
                s.name, fb::EnumNameDType(x.dtype), cuda ? "Float32 or Float16" : "Float32");
  }
  JP_RETURN_IF_ERROR(check_same_dtype(s, x, y));
  return check_role_dtype(s, grid, fb::DType::Float32, "grid");
}

}  // namespace

Status prepare_grid_sample(const jp_plan& plan, const fb::GridSampleParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "GridSample", 2, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& grid = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_dtypes(plan, *s, x, grid, y));
  JP_RETURN_IF_ERROR(check_enum<kernels::kGridSampleModeCount>(*s, p.mode(), "GridSample mode"));
  JP_RETURN_IF_ERROR(
      check_enum<kernels::kGridSamplePaddingCount>(*s, p.padding(), "GridSample padding"));
  const int32_t r = x.rank - 2;
  if (r < 1 || r > kernels::kGridSampleMaxSpatial) {
    return invalid(*s, "X must have 1 to 3 spatial dims ([N, C, *spatial])");
  }
  if (channels_last(x) || channels_last(y) || channels_last(grid)) {
    return invalid(*s, "GridSample reads and writes NCHW tensors");
  }
  // Y [N, C, *out] and grid [N, *out, r].
  if (y.rank != x.rank || y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1]) {
    return invalid(*s, "output must be [N, C, *out] of X's N and C");
  }
  int64_t want_grid[kernels::kMaxRank] = {};
  want_grid[0] = x.dims[0];
  for (int32_t d = 0; d < r; ++d) want_grid[1 + d] = y.dims[2 + d];
  want_grid[r + 1] = r;
  JP_RETURN_IF_ERROR(check_dims(*s, grid, r + 2, want_grid, "grid"));
  kernels::GridSampleParams& k = fresh_params(&s->params.grid_sample);
  k.mode = static_cast<kernels::GridSampleMode>(p.mode());
  k.padding = static_cast<kernels::GridSamplePadding>(p.padding());
  k.align_corners = p.align_corners();
  k.spatial = r;
  k.batch = x.dims[0];
  k.channels = x.dims[1];
  bool y_empty = false;
  for (int32_t d = 0; d < y.rank; ++d) y_empty = y_empty || y.dims[d] == 0;
  for (int32_t d = 0; d < r; ++d) {
    const int32_t at = kernels::kGridSampleMaxSpatial - r + d;
    k.in[at] = x.dims[2 + d];
    k.out[at] = y.dims[2 + d];
    // Border and reflection read an edge sample: there must be one wherever Y is sampled.
    if (k.in[at] < 1 && !y_empty) return invalid(*s, "X has a spatial dim of 0 to sample from");
  }
  return JP_OK;
}

void run_grid_sample_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::grid_sample(s.params.grid_sample, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                            out_f32(s, tensors));
}

}  // namespace jetplan::rt
