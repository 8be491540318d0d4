#include "kernels/cuda/select.h"
#include "kernels/params_tensor.h"

namespace jetplan::kernels::cuda {

bool select_cast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                 std::string* why) {
  const auto* p = static_cast<const CastParams*>(step.params);
  if (p->from == DType::kFloat32 && p->to == DType::kFloat16) {
    out->variant = find_kernel_variant("jp_cast_f32_f16");
  } else if (p->from == DType::kFloat16 && p->to == DType::kFloat32) {
    out->variant = find_kernel_variant("jp_cast_f16_f32");
  } else {
    *why = "the CUDA Cast kernels convert Float32 <-> Float16 only";
    return false;
  }
  // Four elements per thread on the vector path.
  launch_1d((static_cast<uint64_t>(p->count) + 3) / 4, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
