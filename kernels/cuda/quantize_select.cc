// Quantize selection: Float16 or Float32 x to Int8 or UInt8, one element per thread; the image
// form (an INT8 stem's padded input) one pixel per thread.
#include "kernels/cuda/select.h"
#include "kernels/quantize.h"

namespace jetplan::kernels::cuda {

bool select_quantize(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                     std::string* why) {
  const auto& p = *static_cast<const QuantizeLinearParams*>(step.params);
  const bool f16 = step.dtype == DType::kFloat16;
  if ((!f16 && step.dtype != DType::kFloat32) ||
      (p.qtype != DType::kInt8 && p.qtype != DType::kUInt8)) {
    *why = "the CUDA QuantizeLinear kernels take Float16 or Float32 to Int8 or UInt8";
    return false;
  }
  const bool s8 = p.qtype == DType::kInt8;
  if (p.layout != QuantizeLayout::kSame) {  // one thread a pixel
    if (!s8) {
      *why = "the CUDA kernel of QuantizeLinear's image form (channels padded) writes Int8 only";
      return false;
    }
    out->variant = &kernel_variant(f16 ? VariantId::jp_quantize_image_f16_i8
                                       : VariantId::jp_quantize_image_f32_i8);
    launch_1d(static_cast<uint64_t>(p.outer * p.inner), 256, target.sm_count * 8, out);
    return true;
  }
  out->variant = &kernel_variant(f16 ? (s8 ? VariantId::jp_quantize_f16_i8 : VariantId::jp_quantize_f16_u8)
                                     : (s8 ? VariantId::jp_quantize_f32_i8 : VariantId::jp_quantize_f32_u8));
  launch_1d(static_cast<uint64_t>(p.outer * p.channels * p.inner), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
