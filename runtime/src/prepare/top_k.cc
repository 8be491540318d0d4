// TopK: the k largest (or smallest) values along an axis and their Int64 indices.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_top_k(const jp_plan& plan, const fb::TopKParams& p, PreparedStep* s) {
  // x and values Float32, or Float16 in CUDA plans (their float tensors); indices Int64.
  const fb::DType f = plan.backend == JP_BACKEND_CUDA && s->inputs->size() == 1 &&
                              input_at(plan, *s, 0).dtype == fb::DType::Float16
                          ? fb::DType::Float16
                          : fb::DType::Float32;
  JP_RETURN_IF_ERROR(check_kernel_dtypes(plan, *s, "TopK", {f}, {f, fb::DType::Int64}));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& values = output_at(plan, *s, 0);
  const TensorInfo& indices = output_at(plan, *s, 1);
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  if (!same_shape(values, indices) || values.rank != x.rank) {
    return invalid(*s, "values and indices need one shape of the input's rank");
  }
  for (int32_t d = 0; d < x.rank; ++d) {
    if (d == axis ? values.dims[d] > x.dims[d] : values.dims[d] != x.dims[d]) {
      return invalid(*s, "outputs are not the input with the axis of extent k <= its own");
    }
  }
  kernels::TopKParams& k = fresh_params(&s->params.top_k);
  split_at(x, axis, &k.outer, &k.inner);
  k.axis = x.dims[axis];
  k.k = values.dims[axis];
  k.largest = p.largest();
  return check_workspace(plan, *s, kernels::cpu::topk_workspace_bytes(k));
}

void run_top_k_cpu(const PreparedStep& s, void* const* tensors, void* workspace) {
  kernels::cpu::topk(s.params.top_k, in_f32(s, tensors, 0), workspace, out_f32(s, tensors, 0),
                     out_i64(s, tensors, 1));
}

}  // namespace jetplan::rt
