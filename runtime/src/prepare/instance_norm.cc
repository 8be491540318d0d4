// InstanceNorm: normalization over each (batch, channel)'s spatial extent, with a fused
// activation.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_instance_norm(const jp_plan& plan, const fb::InstanceNormParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_all_float_arity(plan, *s, "InstanceNorm", 3, 1));
  kernels::InstanceNormParams& k = fresh_params(&s->params.instance_norm);
  JP_RETURN_IF_ERROR(read_channels(plan, *s, &k.batch, &k.channels, &k.spatial));
  JP_RETURN_IF_ERROR(
      check_scale_bias(plan, *s, k.channels, "scale and bias need one value per channel"));
  return read_epsilon_activation(*s, p.epsilon(), p.activation(), &k.epsilon, &k.act);
}

void run_instance_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::instance_norm(s.params.instance_norm, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                              in_f32(s, tensors, 2), out_f32(s, tensors));
}

}  // namespace jetplan::rt
