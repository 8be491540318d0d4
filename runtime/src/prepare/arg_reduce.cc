// ArgReduce: ArgMax and ArgMin along one axis, kept as extent 1; Int64 indices.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_arg_reduce(const jp_plan& plan, const fb::ArgReduceParams& p, PreparedStep* s) {
  // x Float32, or Float16 in CUDA plans (their float tensors); y Int64.
  const bool f16 = plan.backend == JP_BACKEND_CUDA && s->inputs->size() == 1 &&
                   input_at(plan, *s, 0).dtype == fb::DType::Float16;
  JP_RETURN_IF_ERROR(check_kernel_dtypes(plan, *s, "ArgReduce",
                                         {f16 ? fb::DType::Float16 : fb::DType::Float32},
                                         {fb::DType::Int64}));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (p.kind() != fb::ArgKind::Max && p.kind() != fb::ArgKind::Min) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unknown arg kind %d", s->name,
                static_cast<int>(p.kind()));
  }
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  if (y.rank != x.rank) return invalid(*s, "output rank differs from the input's");
  for (int32_t d = 0; d < x.rank; ++d) {
    if (y.dims[d] != (d == axis ? 1 : x.dims[d])) {
      return invalid(*s, "output is not the input with the axis of extent 1");
    }
  }
  kernels::ArgReduceParams& k = fresh_params(&s->params.arg_reduce);
  k.kind = p.kind() == fb::ArgKind::Max ? kernels::ArgKind::kMax : kernels::ArgKind::kMin;
  k.select_last_index = p.select_last_index();
  split_at(x, axis, &k.outer, &k.inner);
  k.axis = x.dims[axis];
  return JP_OK;
}

void run_arg_reduce_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::arg_reduce(s.params.arg_reduce, in_f32(s, tensors, 0), out_i64(s, tensors, 0));
}

}  // namespace jetplan::rt
