#include "kernels/cuda/select.h"
#include "kernels/unary.h"

namespace jetplan::kernels::cuda {

// Unary: Float32 and Float16 take every op but Not (FP16 computes in FP32), int32/int64 take
// Abs, Neg and Sign, bool takes Not (unary_supported, with Float16 added).
bool select_unary(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  const auto* p = static_cast<const UnaryParams*>(step.params);
  const bool pred = unary_is_predicate(p->op);
  bool found = false;
  VariantId id = VariantId::jp_unary_f32;
  if (p->op == UnaryOp::kNot) {
    found = p->dtype == DType::kBool;
    id = VariantId::jp_unary_not;
  } else if (p->dtype == DType::kFloat32) {
    found = true;
    id = pred ? VariantId::jp_unary_pred_f32 : VariantId::jp_unary_f32;
  } else if (p->dtype == DType::kFloat16) {
    found = true;
    id = pred ? VariantId::jp_unary_pred_f16 : VariantId::jp_unary_f16;
  } else if (p->dtype == DType::kInt32 || p->dtype == DType::kInt64) {
    found = unary_supported(p->op, p->dtype);
    id = p->dtype == DType::kInt32 ? VariantId::jp_unary_i32 : VariantId::jp_unary_i64;
  }
  if (!found) {
    *why =
        "the CUDA Unary kernels take Float32/Float16 (every op but Not), Int32/Int64 (Abs, "
        "Neg, Sign) and Bool (Not)";
    return false;
  }
  out->variant = &kernel_variant(id);
  launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
