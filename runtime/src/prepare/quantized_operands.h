// What the quantized families (Quantize, Dequantize, QLinearMatMul, QLinearConv) check alike:
// Int8/UInt8 tensors and their (scale, zero point) pairs, and the one shape rule of
// QuantizeLinear and DequantizeLinear.
#pragma once

#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

// `t`, the step's `role`, is Int8 or UInt8.
[[nodiscard]] Status check_quantized(const PreparedStep& s, const TensorInfo& t, const char* role);

// A QLinear step (QLinearMatMul, QLinearConv): exactly the `inputs` its params imply and one
// output; its operands, inputs 0 and 3 (`a_role`, `b_role`), and output 0 Int8 or UInt8.
[[nodiscard]] Status check_qlinear_operands(const jp_plan& plan, const PreparedStep& s,
                                            const char* family, uint32_t inputs,
                                            const char* a_role, const char* b_role);

// Scale and zero point of one operand: Float32 and the operand's `type`, one element or `count`
// (per row, column or channel). *per_entry: whether they are per row/column/channel.
[[nodiscard]] Status check_scale_pair(const PreparedStep& s, const TensorInfo& scale,
                                      const TensorInfo& zp, fb::DType type, uint64_t count,
                                      const char* role, bool* per_entry);

// QuantizeLinear (quantize) or DequantizeLinear: x, scale[, zero point] -> y of x's shape, the
// quantized side Int8 or UInt8, per tensor or per axis. Fills s->params.quantize.
[[nodiscard]] Status prepare_quantize_linear(const jp_plan& plan, const fb::QuantizeParams& p,
                                             PreparedStep* s, bool quantize);
// The CPU run of a step prepare_quantize_linear prepared: x, scale[, zero point] -> y.
void run_quantize_linear_cpu(const PreparedStep& s, void* const* tensors, bool quantize);

}  // namespace jetplan::rt
