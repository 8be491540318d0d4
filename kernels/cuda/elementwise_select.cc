#include "kernels/cuda/select.h"
#include "kernels/elementwise.h"

namespace jetplan::kernels::cuda {

// Elementwise: comparisons on every dtype (Float16 included), logic on Bool, integer arithmetic
// on Int32/Int64, FMod on Float32/Float64 (elementwise_supported, with Float16 comparisons).
bool select_elementwise(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                        std::string* why) {
  const auto* p = static_cast<const ElementwiseParams*>(step.params);
  bool found = true;
  VariantId id = VariantId::jp_elementwise_i32;
  if (elementwise_is_logic(p->op)) {
    found = p->dtype == DType::kBool;
    id = VariantId::jp_elementwise_cmp_bool;
  } else if (elementwise_is_comparison(p->op)) {
    switch (p->dtype) {
      case DType::kFloat32:
        id = VariantId::jp_elementwise_cmp_f32;
        break;
      case DType::kFloat16:
        id = VariantId::jp_elementwise_cmp_f16;
        break;
      case DType::kFloat64:
        id = VariantId::jp_elementwise_cmp_f64;
        break;
      case DType::kInt8:
        id = VariantId::jp_elementwise_cmp_i8;
        break;
      case DType::kUInt8:
        id = VariantId::jp_elementwise_cmp_u8;
        break;
      case DType::kInt32:
        id = VariantId::jp_elementwise_cmp_i32;
        break;
      case DType::kInt64:
        id = VariantId::jp_elementwise_cmp_i64;
        break;
      case DType::kBool:
        id = VariantId::jp_elementwise_cmp_bool;
        break;
      case DType::kInt16:
      case DType::kUInt16:
      case DType::kUInt32:
      case DType::kUInt64:
      case DType::kBFloat16:
        found = false;
        break;  // CPU backend only
    }
  } else if (p->dtype == DType::kInt32) {
    id = VariantId::jp_elementwise_i32;
  } else if (p->dtype == DType::kInt64) {
    id = VariantId::jp_elementwise_i64;
  } else if (p->op == ElementwiseOp::kFMod && p->dtype == DType::kFloat32) {
    id = VariantId::jp_elementwise_fmod_f32;
  } else if (p->op == ElementwiseOp::kFMod && p->dtype == DType::kFloat64) {
    id = VariantId::jp_elementwise_fmod_f64;
  } else {
    found = false;
  }
  if (!found) {
    *why = "no CUDA Elementwise kernel for this op and dtype (float arithmetic is Binary)";
    return false;
  }
  out->variant = &kernel_variant(id);
  launch_1d(count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
