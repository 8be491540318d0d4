// Gemm: Y = alpha * op(A) op(B) + beta * C over batched matrices, with a residual add and an
// activation fused, and in CUDA plans an FP32 output of FP16 inputs.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {
namespace {

// C broadcasts to [*batch, M, N] by numpy rules; its matrix dims may be 1 (broadcast) and its
// batch dims all 1 or all equal to the output's.
Status read_c(const PreparedStep& s, const TensorInfo& c, const TensorInfo& y, int64_t batch,
              kernels::GemmParams* k) {
  if (c.rank > y.rank) return invalid(s, "C has a higher rank than the output");
  int64_t dims[kMaxRank];
  for (int32_t i = 0; i < y.rank; ++i) {
    const int32_t ci = i - (y.rank - c.rank);
    dims[i] = ci >= 0 ? c.dims[ci] : 1;
    if (dims[i] != 1 && dims[i] != y.dims[i]) return invalid(s, "C does not broadcast");
  }
  const int64_t cm = dims[y.rank - 2], cn = dims[y.rank - 1];
  const int64_t c_batch = static_cast<int64_t>(c.elements) / (cm * cn);
  if (c_batch != 1 && c_batch != batch) return invalid(s, "C's batch dims do not match");
  k->c_stride_n = cn == 1 ? 0 : 1;
  k->c_stride_m = cm == 1 ? 0 : cn;
  k->c_stride_batch = c_batch == 1 ? 0 : cm * cn;
  return JP_OK;
}

}  // namespace

Status prepare_gemm(const jp_plan& plan, const fb::GemmParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_epilogue_inputs(plan, *s, "Gemm", p.has_c(), p.has_residual()));
  const TensorInfo& a = input_at(plan, *s, 0);
  const TensorInfo& b = input_at(plan, *s, 1);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) return invalid(*s, "operands need rank >= 2");
  const int64_t M = p.trans_a() ? a.dims[a.rank - 1] : a.dims[a.rank - 2];
  const int64_t K = p.trans_a() ? a.dims[a.rank - 2] : a.dims[a.rank - 1];
  const int64_t Kb = p.trans_b() ? b.dims[b.rank - 1] : b.dims[b.rank - 2];
  const int64_t N = p.trans_b() ? b.dims[b.rank - 2] : b.dims[b.rank - 1];
  if (K != Kb) return invalid(*s, "inner dimensions of A and B differ");
  if (y.dims[y.rank - 2] != M || y.dims[y.rank - 1] != N) {
    return invalid(*s, "output is not [.., M, N]");
  }
  const int64_t batch = static_cast<int64_t>(y.elements) / (M * N);
  kernels::GemmParams& k = fresh_params(&s->params.gemm);
  if (!matmul_batch_stride(a, y, M * K, &k.a_batch_stride) ||
      !matmul_batch_stride(b, y, K * N, &k.b_batch_stride)) {
    return invalid(*s, "batch dims of A or B neither match the output nor are all 1");
  }
  k.batch = batch;
  k.M = M;
  k.N = N;
  k.K = K;
  k.trans_a = p.trans_a();
  k.trans_b = p.trans_b();
  k.alpha = p.alpha();
  k.beta = p.beta();
  k.has_c = p.has_c();
  k.has_residual = p.has_residual();
  JP_RETURN_IF_ERROR(check_residual(plan, *s, p.has_residual(), p.has_c() ? 3 : 2,
                                    "residual R must have exactly the output's shape and layout"));
  if (p.has_c()) JP_RETURN_IF_ERROR(read_c(*s, input_at(plan, *s, 2), y, batch, &k));
  // A batched A against one B (a Linear layer over [batch, M, K], the attention projections)
  // is one [batch * M, K] x [K, N] product: the same sums, one big GEMM instead of batch thin
  // ones. C must follow: broadcast over rows, or dense per batch.
  if (k.batch > 1 && k.b_batch_stride == 0 && !k.trans_a && k.a_batch_stride == M * K &&
      (!k.has_c || (k.c_stride_batch == 0 && k.c_stride_m == 0) ||
       (k.c_stride_batch == M * N && k.c_stride_m == N))) {
    k.M = k.batch * M;
    k.batch = 1;
    k.a_batch_stride = 0;
    k.c_stride_batch = 0;
  }
  return to_activation(*s, p.activation(), &k.act);
}

void run_gemm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::GemmParams& p = s.params.gemm;
  kernels::cpu::gemm(p, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                     p.has_c ? in_f32(s, tensors, 2) : nullptr,
                     p.has_residual ? in_f32(s, tensors, p.has_c ? 3 : 2) : nullptr,
                     out_f32(s, tensors));
}

}  // namespace jetplan::rt
