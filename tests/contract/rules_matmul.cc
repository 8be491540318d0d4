// Contract rule of Gemm (schemas/plan.fbs GemmParams): y[b] = op(A[b]) x op(B[b]) + C + R,
// A [.., M, K] ([.., K, M] with trans_a), B [.., K, N] ([.., N, K] with trans_b), C broadcasting
// to y, the residual R of y's shape. QLinearMatMul's rule is with the quantized families.
#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing::contract {

void contract_gemm(StepContract& c) {
  c.inputs_are(fb::DType::Float32);
  const auto* p = c.step->params_as_GemmParams();
  const auto& in = c.in;
  const Shape& y = c.y;
  if (!p || in.size() != 2u + p->has_c() + p->has_residual())
    return c.bad("step ", c.name, " gemm params/inputs");
  const Shape &a = in[0], &b = in[1];
  if (a.size() < 2 || b.size() < 2) return c.bad("step ", c.name, " gemm rank");
  const int64_t m = p->trans_a() ? a.back() : a[a.size() - 2];
  const int64_t ka = p->trans_a() ? a[a.size() - 2] : a.back();
  const int64_t kb = p->trans_b() ? b.back() : b[b.size() - 2];
  const int64_t n = p->trans_b() ? b[b.size() - 2] : b.back();
  c.expect(ka == kb, "gemm K");
  c.expect(y.size() >= 2 && y[y.size() - 2] == m && y.back() == n, "gemm output " + str(y));
  const Shape batch(y.begin(), y.end() - 2);
  for (const Shape* op : {&a, &b}) {
    const Shape ob(op->begin(), op->end() - 2);
    c.expect(ob == batch || count(ob) == 1, "gemm batch " + str(*op) + " vs " + str(y));
  }
  Shape c_out;
  if (p->has_c()) c.expect(broadcast(in[2], y, &c_out) && c_out == y, "gemm C broadcast");
  if (p->has_residual()) c.expect(in.back() == y, "gemm residual shape " + str(in.back()));
}

}  // namespace jetplan::converter::testing::contract
