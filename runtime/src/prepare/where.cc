// Where: x where a Bool condition holds, else y; the three broadcast to the output.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_where(const jp_plan& plan, const fb::WhereParams&, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Where", 3, 1));
  const TensorInfo& cond = input_at(plan, *s, 0);
  const TensorInfo& x = input_at(plan, *s, 1);
  const TensorInfo& y = input_at(plan, *s, 2);
  const TensorInfo& out = output_at(plan, *s, 0);
  if (cond.dtype != fb::DType::Bool) return invalid(*s, "the condition must be Bool");
  JP_RETURN_IF_ERROR(check_same_dtype(*s, x, out));
  JP_RETURN_IF_ERROR(check_same_dtype(*s, y, out));
  kernels::WhereParams& k = fresh_params(&s->params.where);
  k.elem_bytes = static_cast<int64_t>(dtype_size(out.dtype));
  const TensorInfo* operands[] = {&cond, &x, &y};
  int64_t* strides[] = {k.cond_strides, k.x_strides, k.y_strides};
  return broadcast_operands(*s, out, operands, strides, 3, &k.rank, k.out_dims);
}

void run_where_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::where(s.params.where, static_cast<const unsigned char*>(in(s, tensors, 0)),
                      in(s, tensors, 1), in(s, tensors, 2), out(s, tensors));
}

}  // namespace jetplan::rt
