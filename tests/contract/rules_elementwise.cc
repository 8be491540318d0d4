// Contract rules of the elementwise families (schemas/plan.fbs BinaryParams, ActivationParams,
// PointwiseParams, UnaryParams, ElementwiseParams, WhereParams, CastParams): operands broadcast
// to the output by numpy rules; Binary, Activation and Pointwise compute float32 only, the
// others any dtype.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {

void contract_binary(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  Shape out;
  if (!c.step->params_as_BinaryParams() || c.in.size() != 2)
    return c.bad("step ", c.name, " binary");
  c.expect(broadcast(c.in[0], c.in[1], &out) && out == c.y && c.y.size() <= 8, "binary output");
}

void contract_activation(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  c.expect(c.step->params_as_ActivationParams() && c.in.size() == 1 && c.in[0] == c.y,
           "activation");
}

// 1..8 inputs, each broadcasting to the output; 1..16 instructions, each reading registers
// written before it and loading inputs that exist.
void contract_pointwise(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_PointwiseParams();
  const auto& in = c.in;
  if (!p || !p->program() || in.empty() || in.size() > 8 || p->program()->size() == 0 ||
      p->program()->size() > 16)
    return c.bad("step ", c.name, " pointwise params");
  for (const Shape& x : in) {
    Shape out;
    c.expect(broadcast(x, c.y, &out) && out == c.y,
             "pointwise input " + str(x) + " vs " + str(c.y));
  }
  for (uint32_t i = 0; i < p->program()->size(); ++i) {
    const fb::PointwiseInstr* ins = p->program()->Get(i);
    const bool load = ins->kind() == fb::PointwiseInstrKind::Load;
    const bool two = ins->kind() == fb::PointwiseInstrKind::Binary;
    c.expect(load ? ins->op() < in.size() : ins->a() < i && (!two || ins->b() < i),
             "pointwise instruction " + std::to_string(i));
  }
}

void contract_unary(StepContract& c) {
  const auto* p = c.step->params_as_UnaryParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " unary");
  const bool predicate = p->op() >= fb::UnaryOp::IsNaN;  // IsNaN .. Not give bool
  c.expect(c.in[0] == c.y, "unary shape");
  c.expect(c.dtype_of(0) == (predicate ? fb::DType::Bool : c.in_dtype(0)), "unary dtype");
}

void contract_elementwise(StepContract& c) {
  const auto* p = c.step->params_as_ElementwiseParams();
  Shape out;
  if (!p || c.in.size() != 2) return c.bad("step ", c.name, " elementwise");
  c.expect(broadcast(c.in[0], c.in[1], &out) && out == c.y, "elementwise output " + str(c.y));
  c.expect(c.in_dtype(0) == c.in_dtype(1), "elementwise operands differ in dtype");
  const bool to_bool = p->op() >= fb::ElementwiseOp::Equal &&  // comparisons and logic
                       p->op() <= fb::ElementwiseOp::Xor;
  c.expect(c.dtype_of(0) == (to_bool ? fb::DType::Bool : c.in_dtype(0)), "elementwise dtype");
}

// Inputs condition (bool), x, y; the three broadcast to the output, of x's dtype.
void contract_where(StepContract& c) {
  Shape xy, out;
  if (!c.step->params_as_WhereParams() || c.in.size() != 3)
    return c.bad("step ", c.name, " where");
  c.expect(broadcast(c.in[1], c.in[2], &xy) && broadcast(c.in[0], xy, &out) && out == c.y,
           "where output " + str(c.y));
  c.expect(c.in_dtype(0) == fb::DType::Bool && c.in_dtype(1) == c.in_dtype(2) &&
               c.dtype_of(0) == c.in_dtype(1),
           "where dtypes");
}

void contract_cast(StepContract& c) {
  c.expect(c.step->params_as_CastParams() && c.in.size() == 1 && c.in[0] == c.y, "cast shape");
}

}  // namespace jetplan::converter::testing::contract
