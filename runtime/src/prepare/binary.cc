// Binary: a float binary op (Add, Mul, ..., PRelu) of two broadcast operands, with a fused
// activation; an Add also of Int8 (an INT8 plan's, requantized); a float one writing Int8 (an
// INT8 plan's, for INT8 readers).
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

void run_binary_to_int8_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::binary_to_int8(s.params.binary, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                               *in_f32(s, tensors, 2), static_cast<int8_t*>(out(s, tensors)));
}

// An INT8 plan's float Binary into Int8 y: a and b of one float dtype (Float32, or Float16 in
// CUDA plans), the third input the Float32 inverse of y's scale (kernels/binary.h
// binary_to_int8).
Status check_to_int8(const jp_plan& plan, const PreparedStep& s) {
  JP_RETURN_IF_ERROR(check_arity(s, "Binary", 3, 1));
  const TensorInfo& a = input_at(plan, s, 0);
  const TensorInfo& b = input_at(plan, s, 1);
  const TensorInfo& inv = input_at(plan, s, 2);
  const bool float_ok = a.dtype == fb::DType::Float32 ||
                        (a.dtype == fb::DType::Float16 && plan.backend == JP_BACKEND_CUDA);
  if (!float_ok || b.dtype != a.dtype || inv.dtype != fb::DType::Float32 || inv.elements != 1) {
    return fail(JP_ERROR_UNSUPPORTED,
                "step '%s': a Binary into Int8 takes two tensors of one float dtype (%s and %s "
                "here) and one Float32 inverse scale",
                s.name, fb::EnumNameDType(a.dtype), fb::EnumNameDType(b.dtype));
  }
  return JP_OK;
}

}  // namespace

Status prepare_binary(const jp_plan& plan, const fb::BinaryParams& p, PreparedStep* s) {
  const bool int8 = s->inputs->size() > 0 && input_at(plan, *s, 0).dtype == fb::DType::Int8;
  const bool to_int8 = !int8 && s->outputs->size() > 0 &&
                       output_at(plan, *s, 0).dtype == fb::DType::Int8;
  if (int8)
    JP_RETURN_IF_ERROR(check_int8_add(plan, p, *s));
  else if (to_int8)
    JP_RETURN_IF_ERROR(check_to_int8(plan, *s));
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
  if (to_int8) s->run_cpu = run_binary_to_int8_cpu;
  return to_activation(*s, p.activation(), &k.act);
}

void run_binary_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::binary(s.params.binary, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                       out_f32(s, tensors));
}

}  // namespace jetplan::rt
