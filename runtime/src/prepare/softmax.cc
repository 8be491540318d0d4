// Softmax (and LogSoftmax) along one axis.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_softmax(const jp_plan& plan, const fb::SoftmaxParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_float_inputs(plan, *s, "Softmax", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (!same_shape(x, y) || x.rank < 1) return invalid(*s, "input and output shapes differ");
  const int32_t axis = normalize_axis(p.axis(), x.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  kernels::SoftmaxParams& k = fresh_params(&s->params.softmax);
  split_at(x, axis, &k.outer, &k.inner);
  k.axis = x.dims[axis];
  k.log = p.log();
  k.masked_rows_zero = p.masked_rows_zero();
  return JP_OK;
}

void run_softmax_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::softmax(s.params.softmax, in_f32(s, tensors, 0), out_f32(s, tensors));
}

}  // namespace jetplan::rt
