// Contract rules of the families that reduce or select along axes (schemas/plan.fbs
// ReduceParams, ArgReduceParams, TopKParams): the output keeps the input's rank, each reduced
// axis of extent 1 (TopK: of extent k); float inputs only.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {

// Float32 inputs; CPU plans also reduce float64, every input and output alike.
void contract_reduce(StepContract& c) {
  const bool f64 = c.cpu && c.dtype_of(0) == fb::DType::Float64;
  c.inputs_are(f64 ? fb::DType::Float64 : fb::DType::Float32);
  const auto* p = c.step->params_as_ReduceParams();
  if (!p || !p->axes() || c.in.size() != 1) return c.bad("step ", c.name, " reduce");
  Shape want = c.in[0];
  for (int32_t a : *p->axes())
    if (a >= 0 && static_cast<size_t>(a) < want.size()) want[a] = 1;
  c.expect(c.y == want, "reduce output " + str(c.y) + ", the reduced dims kept as 1");
}

// Output int64, the axis of extent 1.
void contract_arg_reduce(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_ArgReduceParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " argreduce");
  Shape want = c.in[0];
  if (p->axis() >= 0 && static_cast<size_t>(p->axis()) < want.size()) want[p->axis()] = 1;
  c.expect(c.y == want && c.dtype_of(0) == fb::DType::Int64, "argreduce output " + str(c.y));
}

// Outputs values and indices (int64), both x's shape with the axis of extent k in [1, x's];
// a workspace.
void contract_top_k(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_TopKParams();
  if (!p || c.in.size() != 1 || c.step->outputs()->size() != 2)
    return c.bad("step ", c.name, " topk");
  const Shape& x = c.in[0];
  const Shape& y = c.y;
  const Shape indices = c.shape(c.step->outputs()->Get(1));
  bool ok = p->axis() >= 0 && static_cast<size_t>(p->axis()) < x.size() &&
            y.size() == x.size() && indices == y;
  for (size_t d = 0; ok && d < x.size(); ++d)
    ok = static_cast<int32_t>(d) == p->axis() ? y[d] >= 1 && y[d] <= x[d] : y[d] == x[d];
  c.expect(ok && c.dtype_of(1) == fb::DType::Int64 && c.step->workspace_bytes() > 0,
           "topk outputs " + str(y));
}

// CumSum (sums, or CumProd's products with product set): y of x's shape and dtype (float32,
// float16, float64, int32 or int64), the axis one of its dims.
void contract_cum_sum(StepContract& c) {
  const auto* p = c.step->params_as_CumSumParams();
  if (!p || c.in.size() != 1) return c.bad("step ", c.name, " cum_sum");
  const int64_t r = static_cast<int64_t>(c.y.size());
  c.expect(c.in[0] == c.y && p->axis() >= 0 && p->axis() < r, "cum_sum shape and axis");
  const fb::DType t = c.in_dtype(0);
  c.expect(c.dtype_of(0) == t && (t == fb::DType::Float32 || t == fb::DType::Float16 ||
                                  t == fb::DType::Float64 || t == fb::DType::Int32 ||
                                  t == fb::DType::Int64),
           "cum_sum dtype");
}

}  // namespace jetplan::converter::testing::contract
