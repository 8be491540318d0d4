// Reduce: ReduceSum, ReduceMean, ReduceMax, ... over a set of axes, keeping them as extent 1.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// Float64 reductions, chosen by prepare (the CUDA backend's is jp_reduce_f64).
void run_reduce_f64_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::reduce(s.params.reduce, static_cast<const double*>(in(s, tensors, 0)),
                       static_cast<double*>(out(s, tensors)));
}

}  // namespace

Status prepare_reduce(const jp_plan& plan, const fb::ReduceParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Reduce", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (x.dtype == fb::DType::Float64) {
    // Float64 reductions accumulate in double on both backends.
    JP_RETURN_IF_ERROR(check_kernel_dtype(*s, y, fb::DType::Float64));
    s->run_cpu = run_reduce_f64_cpu;
  } else {
    JP_RETURN_IF_ERROR(check_all_float32(plan, *s));
  }
  JP_RETURN_IF_ERROR(check_enum<kernels::kReduceOpCount>(*s, p.op(), "reduce op"));
  uint32_t mask = 0;
  if (p.axes() != nullptr) {
    for (uint32_t i = 0; i < p.axes()->size(); ++i) {
      const int32_t a = p.axes()->Get(i);
      if (a < 0 || a >= x.rank || (mask >> a & 1u)) {
        return invalid(*s, "axes must be distinct dims of the input");
      }
      mask |= 1u << a;
    }
  }
  if (y.rank != x.rank) return invalid(*s, "output rank differs from the input's");
  for (int32_t d = 0; d < x.rank; ++d) {
    if (y.dims[d] != ((mask >> d & 1u) ? 1 : x.dims[d])) {
      return invalid(*s, "output is not the input with the reduced dims of extent 1");
    }
  }
  kernels::ReduceParams& k = fresh_params(&s->params.reduce);
  k.op = static_cast<kernels::ReduceOp>(p.op());
  k.rank = x.rank;
  for (int32_t d = 0; d < x.rank; ++d) k.in_dims[d] = x.dims[d];
  k.axis_mask = mask;
  return JP_OK;
}

void run_reduce_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::reduce(s.params.reduce, in_f32(s, tensors, 0), out_f32(s, tensors));
}

}  // namespace jetplan::rt
