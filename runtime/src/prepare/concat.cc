// Concat: inputs of any one dtype joined along an axis.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_concat(const jp_plan& plan, const fb::ConcatParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_input_range(*s, "Concat", 1, kernels::kMaxConcatInputs));
  const TensorInfo& y = output_at(plan, *s, 0);
  if (y.rank < 1) return invalid(*s, "output must have rank >= 1");
  const int32_t axis = normalize_axis(p.axis(), y.rank);
  if (axis < 0) return invalid(*s, "axis is out of range");
  kernels::ConcatParams& k = fresh_params(&s->params.concat);
  split_at(y, axis, &k.outer, &k.inner);
  k.elem_bytes = static_cast<int64_t>(dtype_size(y.dtype));
  k.num_inputs = static_cast<int32_t>(s->inputs->size());
  int64_t total = 0;
  for (int32_t n = 0; n < k.num_inputs; ++n) {
    const TensorInfo& x = input_at(plan, *s, static_cast<uint32_t>(n));
    if (x.rank != y.rank || x.dtype != y.dtype) {
      return invalid(*s, "inputs must have the output's rank and dtype");
    }
    for (int32_t d = 0; d < y.rank; ++d) {
      if (d != axis && x.dims[d] != y.dims[d]) {
        return invalid(*s, "inputs differ from the output off the concat axis");
      }
    }
    k.axis_len[n] = x.dims[axis];
    total += x.dims[axis];
  }
  if (total != y.dims[axis]) return invalid(*s, "input extents do not sum to the output's");
  return JP_OK;
}

void run_concat_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const void* inputs[kernels::kMaxConcatInputs];
  for (int32_t i = 0; i < s.params.concat.num_inputs; ++i) {
    inputs[i] = in(s, tensors, static_cast<uint32_t>(i));
  }
  kernels::cpu::concat(s.params.concat, inputs, out(s, tensors));
}

}  // namespace jetplan::rt
