// Activation: one float activation (Relu, Sigmoid, ..., Selu) over a tensor.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_activation(const jp_plan& plan, const fb::ActivationParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_float_inputs(plan, *s, "Activation", 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (x.elements != y.elements) return invalid(*s, "input and output sizes differ");
  kernels::ActivationParams& k = fresh_params(&s->params.activation);
  k.count = static_cast<int64_t>(x.elements);
  return to_activation(*s, p.activation(), &k.act);
}

void run_activation_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::activation(s.params.activation, in_f32(s, tensors, 0), out_f32(s, tensors));
}

}  // namespace jetplan::rt
