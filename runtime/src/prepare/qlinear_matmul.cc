// QLinearMatMul: a batched matrix product of Int8/UInt8 operands, each with its scale and zero
// point (per tensor, or per row of A and per column of B), requantized to the output's.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/quantized_operands.h"

namespace jetplan::rt {

Status prepare_qlinear_matmul(const jp_plan& plan, const fb::QLinearMatMulParams&,
                              PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_qlinear_operands(plan, *s, "QLinearMatMul", 8, "A", "B"));
  const TensorInfo& a = input_at(plan, *s, 0);
  const TensorInfo& b = input_at(plan, *s, 3);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) return invalid(*s, "operands need rank >= 2");
  kernels::QLinearMatMulParams& k = fresh_params(&s->params.qlinear_matmul);
  k.M = a.dims[a.rank - 2];
  k.K = a.dims[a.rank - 1];
  k.N = b.dims[b.rank - 1];
  if (b.dims[b.rank - 2] != k.K) return invalid(*s, "inner dimensions of A and B differ");
  if (y.dims[y.rank - 2] != k.M || y.dims[y.rank - 1] != k.N) {
    return invalid(*s, "output is not [.., M, N]");
  }
  k.batch = static_cast<int64_t>(y.elements) / (k.M * k.N);
  if (!matmul_batch_stride(a, y, k.M * k.K, &k.a_batch_stride) ||
      !matmul_batch_stride(b, y, k.K * k.N, &k.b_batch_stride)) {
    return invalid(*s, "batch dims of A or B neither match the output nor are all 1");
  }
  k.a_type = kernel_dtype(a.dtype);
  k.b_type = kernel_dtype(b.dtype);
  k.y_type = kernel_dtype(y.dtype);
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 1), input_at(plan, *s, 2), a.dtype,
                                      static_cast<uint64_t>(k.M), "A", &k.a_per_row));
  JP_RETURN_IF_ERROR(check_scale_pair(*s, input_at(plan, *s, 4), input_at(plan, *s, 5), b.dtype,
                                      static_cast<uint64_t>(k.N), "B", &k.b_per_column));
  bool per_entry = false;
  return check_scale_pair(*s, input_at(plan, *s, 6), input_at(plan, *s, 7), y.dtype, 1, "output",
                          &per_entry);
}

void run_qlinear_matmul_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::qlinear_matmul(s.params.qlinear_matmul, in(s, tensors, 0), in_f32(s, tensors, 1),
                               in(s, tensors, 2), in(s, tensors, 3), in_f32(s, tensors, 4),
                               in(s, tensors, 5), in_f32(s, tensors, 6), in(s, tensors, 7),
                               out(s, tensors, 0));
}

}  // namespace jetplan::rt
