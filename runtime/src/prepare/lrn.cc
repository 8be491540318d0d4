// Lrn: local response normalization across channels.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_lrn(const jp_plan& plan, const fb::LrnParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_all_float_arity(plan, *s, "Lrn", 1, 1));
  kernels::LrnParams& k = fresh_params(&s->params.lrn);
  JP_RETURN_IF_ERROR(read_channels(plan, *s, &k.batch, &k.channels, &k.spatial));
  if (p.size() < 1 || p.size() > kMaxWindow) return invalid(*s, "size must be in [1, 2^31]");
  k.size = p.size();
  k.alpha = p.alpha();
  k.beta = p.beta();
  k.bias = p.bias();
  return JP_OK;
}

void run_lrn_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::lrn(s.params.lrn, in_f32(s, tensors, 0), out_f32(s, tensors));
}

}  // namespace jetplan::rt
