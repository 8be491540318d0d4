// Cast: every dtype to every other (ONNX Cast semantics, kernels/cpu/cast.cc).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_cast(const jp_plan& plan, const fb::CastParams&, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Cast", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");
  kernels::CastParams& k = fresh_params(&s->params.cast);
  k.from = kernel_dtype(x.dtype);
  k.to = kernel_dtype(y.dtype);
  k.count = static_cast<int64_t>(x.elements);
  return JP_OK;
}

void run_cast_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::cast(s.params.cast, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
