// Dequantize selection: Int8 or UInt8 x to Float16 or Float32, one element per thread.
#include "kernels/cuda/select.h"
#include "kernels/dequantize.h"

namespace jetplan::kernels::cuda {

bool select_dequantize(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  const auto& p = *static_cast<const QuantizeLinearParams*>(step.params);
  const bool f16 = step.dtype == DType::kFloat16;
  if ((!f16 && step.dtype != DType::kFloat32) ||
      (p.qtype != DType::kInt8 && p.qtype != DType::kUInt8)) {
    *why = "the CUDA DequantizeLinear kernels take Int8 or UInt8 to Float16 or Float32";
    return false;
  }
  const bool s8 = p.qtype == DType::kInt8;
  out->variant = &kernel_variant(
      f16 ? (s8 ? VariantId::jp_dequantize_i8_f16 : VariantId::jp_dequantize_u8_f16)
          : (s8 ? VariantId::jp_dequantize_i8_f32 : VariantId::jp_dequantize_u8_f32));
  launch_1d(static_cast<uint64_t>(p.outer * p.channels * p.inner), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
