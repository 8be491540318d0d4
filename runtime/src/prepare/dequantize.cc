// Dequantize: ONNX DequantizeLinear, Int8/UInt8 to Float32 per tensor or per axis.
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/quantized_operands.h"

namespace jetplan::rt {

Status prepare_dequantize(const jp_plan& plan, const fb::QuantizeParams& p, PreparedStep* s) {
  return prepare_quantize_linear(plan, p, s, /*quantize=*/false);
}

void run_dequantize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  const kernels::QuantizeLinearParams& p = s.params.quantize;
  kernels::cpu::dequantize_linear(p, in(s, tensors, 0), in_f32(s, tensors, 1),
                                  p.has_zero_point ? in(s, tensors, 2) : nullptr,
                                  out_f32(s, tensors, 0));
}

}  // namespace jetplan::rt
