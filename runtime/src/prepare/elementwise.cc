// Elementwise: typed math of two broadcast operands (integer and float arithmetic, comparisons,
// logic, bit shifts, FMod) over the dtypes each op supports (kernels::elementwise_supported).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_elementwise(const jp_plan& plan, const fb::ElementwiseParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_arity(*s, "Elementwise", 2, 1));
  const TensorInfo& a = input_at(plan, *s, 0);
  const TensorInfo& b = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_enum<kernels::kElementwiseOpCount>(*s, p.op(), "elementwise op"));
  const auto kop = static_cast<kernels::ElementwiseOp>(p.op());
  if (a.dtype != b.dtype) return invalid(*s, "operands differ in dtype");
  if (!kernels::elementwise_supported(kop, kernel_dtype(a.dtype))) {
    return fail(JP_ERROR_UNSUPPORTED, "step '%s': elementwise %s on %s is not supported",
                s->name, fb::EnumNameElementwiseOp(p.op()), fb::EnumNameDType(a.dtype));
  }
  if (kernel_dtype(y.dtype) != kernels::elementwise_out_dtype(kop, kernel_dtype(a.dtype))) {
    return fail(JP_ERROR_INVALID_PLAN,
                "step '%s': output '%s' of elementwise %s has the wrong dtype %s", s->name,
                y.name, fb::EnumNameElementwiseOp(p.op()), fb::EnumNameDType(y.dtype));
  }
  kernels::ElementwiseParams& k = fresh_params(&s->params.elementwise);
  k.op = kop;
  k.dtype = kernel_dtype(a.dtype);
  const TensorInfo* operands[] = {&a, &b};
  int64_t* strides[] = {k.a_strides, k.b_strides};
  return broadcast_operands(*s, y, operands, strides, 2, &k.rank, k.out_dims);
}

void run_elementwise_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::elementwise(s.params.elementwise, in(s, tensors, 0), in(s, tensors, 1),
                            out(s, tensors));
}

}  // namespace jetplan::rt
