// Unary: typed math of one operand (Abs, Neg, Sqrt, Not, IsNaN, ...) over the dtypes each op
// supports (kernels::unary_supported).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_unary(const jp_plan& plan, const fb::UnaryParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Unary", 1, 1));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_enum<kernels::kUnaryOpCount>(*s, p.op(), "unary op"));
  const auto kop = static_cast<kernels::UnaryOp>(p.op());
  // CUDA plans store floats as Float16 and compute in FP32: every op of Float32 then.
  const bool gpu_half = plan.backend == JP_BACKEND_CUDA && x.dtype == fb::DType::Float16 &&
                        kernels::unary_supported(kop, kernels::DType::kFloat32);
  if (!gpu_half && !kernels::unary_supported(kop, kernel_dtype(x.dtype))) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': unary %s on %s is not supported", s->name,
                fb::EnumNameUnaryOp(p.op()), fb::EnumNameDType(x.dtype));
  }
  if (kernel_dtype(y.dtype) != kernels::unary_out_dtype(kop, kernel_dtype(x.dtype))) {
    return fail(JP_ERROR_INVALID_PLAN, "step '%s': output '%s' of unary %s has the wrong dtype %s",
                s->name, y.name, fb::EnumNameUnaryOp(p.op()), fb::EnumNameDType(y.dtype));
  }
  if (!same_shape(x, y)) return invalid(*s, "input and output shapes differ");
  kernels::UnaryParams& k = fresh_params(&s->params.unary);
  k.op = kop;
  k.dtype = kernel_dtype(x.dtype);
  k.count = static_cast<int64_t>(x.elements);
  return JP_OK;
}

void run_unary_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::unary(s.params.unary, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
