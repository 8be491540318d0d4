// Quantize: ONNX QuantizeLinear, Float32 to Int8/UInt8 per tensor or per axis.
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/quantized_operands.h"

namespace jetplan::rt {

Status prepare_quantize(const jp_plan& plan, const fb::QuantizeParams& p, PreparedStep* s) {
  return prepare_quantize_linear(plan, p, s, /*quantize=*/true);
}

void run_quantize_cpu(const PreparedStep& s, void* const* tensors, void*) {
  run_quantize_linear_cpu(s, tensors, /*quantize=*/true);
}

}  // namespace jetplan::rt
