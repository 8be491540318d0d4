// Binary: a float binary op (Add, Mul, ..., PRelu) of two broadcast operands, with a fused
// activation; an Add also of Int8 (an INT8 plan's, requantized).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

static_assert(static_cast<int>(kernels::BinaryOp::kPRelu) == static_cast<int>(fb::BinaryOp::PRelu),
              "kernels::BinaryOp must follow fb::BinaryOp");

namespace {

void run_binary_add_int8_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::binary_add_int8(s.params.binary, static_cast<const int8_t*>(in(s, tensors, 0)),
                                static_cast<const int8_t*>(in(s, tensors, 1)),
                                in_f32(s, tensors, 2), static_cast<int8_t*>(out(s, tensors)));
}

// An INT8 plan's Add of Int8 a and b into Int8 y, its third input the Float32 scales (a's, b's,
// 1 / y's; kernels/binary.h binary_add_int8).
Status check_int8_add(const jp_plan& plan, const fb::BinaryParams& p, const PreparedStep& s) {
  JP_RETURN_IF_ERROR(check_arity(s, "Binary", 3, 1));
  const TensorInfo& scales = input_at(plan, s, 2);
  if (p.op() != fb::BinaryOp::Add || input_at(plan, s, 1).dtype != fb::DType::Int8 ||
      output_at(plan, s, 0).dtype != fb::DType::Int8 || scales.dtype != fb::DType::Float32 ||
      scales.elements != 3) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': an Int8 Binary must be an Add of two Int8 tensors into an Int8 one "
                "with three Float32 scales",
                s.name);
  }
  return JP_OK;
}

}  // namespace

Status prepare_binary(const jp_plan& plan, const fb::BinaryParams& p, PreparedStep* s) {
  const bool int8 = s->inputs->size() > 0 && input_at(plan, *s, 0).dtype == fb::DType::Int8;
  if (int8)
    JP_RETURN_IF_ERROR(check_int8_add(plan, p, *s));
  else
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
  if (int8) s->run_cpu = run_binary_add_int8_cpu;
  return to_activation(*s, p.activation(), &k.act);
}

void run_binary_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::binary(s.params.binary, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                       out_f32(s, tensors));
}

}  // namespace jetplan::rt
