// Binary: a float binary op (Add, Mul, ..., PRelu) of two broadcast operands, with a fused
// activation.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

static_assert(static_cast<int>(kernels::BinaryOp::kPRelu) == static_cast<int>(fb::BinaryOp::PRelu),
              "kernels::BinaryOp must follow fb::BinaryOp");

Status prepare_binary(const jp_plan& plan, const fb::BinaryParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_float_inputs(plan, *s, "Binary", 2));
  const TensorInfo& a = input_at(plan, *s, 0);
  const TensorInfo& b = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  JP_RETURN_IF_ERROR(check_enum<kernels::kBinaryOpCount>(*s, p.op(), "binary op"));
  if (a.rank > y.rank || b.rank > y.rank) return invalid(*s, "operand rank above output's");
  kernels::BinaryParams& k = fresh_params(&s->params.binary);
  k.op = static_cast<kernels::BinaryOp>(p.op());
  const TensorInfo* operands[] = {&a, &b};
  int64_t* strides[] = {k.a_strides, k.b_strides};
  JP_RETURN_IF_ERROR(broadcast_operands(*s, y, operands, strides, 2, &k.rank, k.out_dims));
  return to_activation(*s, p.activation(), &k.act);
}

void run_binary_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::binary(s.params.binary, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                       out_f32(s, tensors));
}

}  // namespace jetplan::rt
