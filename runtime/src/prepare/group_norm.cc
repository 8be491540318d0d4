// GroupNorm: normalization over each group of channels, with per-channel or per-group affine
// parameters and a fused activation.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_group_norm(const jp_plan& plan, const fb::GroupNormParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_all_float_arity(plan, *s, "GroupNorm", 3, 1));
  kernels::GroupNormParams& k = fresh_params(&s->params.group_norm);
  JP_RETURN_IF_ERROR(read_channels(plan, *s, &k.batch, &k.channels, &k.spatial));
  if (p.groups() < 1 || k.channels % p.groups() != 0) {
    return invalid(*s, "groups must divide the channels");
  }
  k.groups = p.groups();
  k.affine_per_group = p.affine_per_group();
  JP_RETURN_IF_ERROR(check_scale_bias(plan, *s, k.affine_per_group ? k.groups : k.channels,
                                      "scale and bias need one value per group or channel"));
  return read_epsilon_activation(*s, p.epsilon(), p.activation(), &k.epsilon, &k.act);
}

void run_group_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::group_norm(s.params.group_norm, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           in_f32(s, tensors, 2), out_f32(s, tensors));
}

}  // namespace jetplan::rt
