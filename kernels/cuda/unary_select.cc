#include "kernels/cuda/select.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {

// Unary: Float32 and Float16 take every op but Not (FP16 computes in FP32), int32/int64 take
// Abs, Neg and Sign, bool takes Not (unary_supported, with Float16 added).
bool select_unary(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  const auto* p = static_cast<const UnaryParams*>(step.params);
  const bool pred = unary_is_predicate(p->op);
  const char* name = nullptr;
  if (p->op == UnaryOp::kNot) {
    if (p->dtype == DType::kBool) name = "jp_unary_not";
  } else if (p->dtype == DType::kFloat32) {
    name = pred ? "jp_unary_pred_f32" : "jp_unary_f32";
  } else if (p->dtype == DType::kFloat16) {
    name = pred ? "jp_unary_pred_f16" : "jp_unary_f16";
  } else if (p->dtype == DType::kInt32 || p->dtype == DType::kInt64) {
    if (unary_supported(p->op, p->dtype))
      name = p->dtype == DType::kInt32 ? "jp_unary_i32" : "jp_unary_i64";
  }
  if (name == nullptr) {
    *why = "the CUDA Unary kernels take Float32/Float16 (every op but Not), Int32/Int64 (Abs, "
           "Neg, Sign) and Bool (Not)";
    return false;
  }
  out->variant = find_kernel_variant(name);
  launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
