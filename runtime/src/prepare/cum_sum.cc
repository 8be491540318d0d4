// CumSum and CumProd: running sums (products) along one axis, y of x's shape and dtype
// (kernels::cum_sum_supported).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_cum_sum(const jp_plan& plan, const fb::CumSumParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_moves_one(plan, *s, "CumSum"));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (!same_shape(x, y) || x.rank < 1) return invalid(*s, "input and output shapes differ");
  const kernels::DType dtype = kernel_dtype(x.dtype);
  // The CUDA kernels add every dtype the twin does.
  if (!kernels::cum_sum_supported(dtype)) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': CumSum on %s is not supported%s", s->name,
                fb::EnumNameDType(x.dtype),
                plan.backend == JP_BACKEND_CUDA ? " by the CUDA backend" : "");
  }
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  kernels::CumSumParams& k = fresh_params(&s->params.cum_sum);
  k.dtype = dtype;
  split_at(x, axis, &k.outer, &k.inner);
  k.length = x.dims[axis];
  k.exclusive = p.exclusive();
  k.reverse = p.reverse();
  k.product = p.product();
  return JP_OK;
}

void run_cum_sum_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::cum_sum(s.params.cum_sum, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
