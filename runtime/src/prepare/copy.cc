// Copy: the bytes of one tensor into another of the same size (Reshape, Flatten, Identity...).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_copy(const jp_plan& plan, const fb::CopyParams&, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_input_range(*s, "Copy", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (x.bytes != y.bytes) return invalid(*s, "input and output sizes differ");
  s->params.copy = kernels::CopyParams{};
  s->params.copy.bytes = static_cast<int64_t>(x.bytes);
  return JP_OK;
}

void run_copy_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::copy(s.params.copy, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
