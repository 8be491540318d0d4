// Slice: a strided window of a tensor of any dtype (ONNX Slice with its starts and steps
// resolved by the converter).
#include <cinttypes>

#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_slice(const jp_plan& plan, const fb::SliceParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_moves_one(plan, *s, "Slice"));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  const auto rank = static_cast<uint32_t>(x.rank);
  if (y.rank != x.rank || p.starts() == nullptr || p.steps() == nullptr ||
      p.starts()->size() != rank || p.steps()->size() != rank) {
    return invalid(*s, "starts, steps, input and output must have the same rank");
  }
  kernels::SliceParams& k = fresh_params(&s->params.slice);
  k.rank = x.rank;
  k.elem_bytes = static_cast<int64_t>(dtype_size(x.dtype));
  for (uint32_t d = 0; d < rank; ++d) {
    const int64_t start = p.starts()->Get(d), step_d = p.steps()->Get(d);
    // The first and the last element read must lie in x's dim; the output is never empty.
    int64_t span = 0, last = 0;
    if (step_d == 0 || start < 0 || start >= x.dims[d] ||
        __builtin_mul_overflow(y.dims[d] - 1, step_d, &span) ||
        __builtin_add_overflow(start, span, &last) || last < 0 || last >= x.dims[d]) {
      return fail(JP_ERROR_INVALID_PLAN,
                  "step '%s': dim %u: start %" PRId64 ", step %" PRId64 " and %" PRId64
                  " outputs read outside the input's %" PRId64,
                  s->name, d, start, step_d, y.dims[d], x.dims[d]);
    }
    k.x_dims[d] = x.dims[d];
    k.out_dims[d] = y.dims[d];
    k.starts[d] = start;
    k.steps[d] = step_d;
  }
  return JP_OK;
}

void run_slice_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::slice(s.params.slice, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
