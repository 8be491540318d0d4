#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_pointwise(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  const bool f16 = step.dtype == DType::kFloat16;
  if (!f16 && step.dtype != DType::kFloat32) {
    *why = "the CUDA pointwise kernels take Float16 or Float32";
    return false;
  }
  uint64_t work = 0;
  if (step.family == 4) {  // Activation
    work = static_cast<uint64_t>(static_cast<const ActivationParams*>(step.params)->count);
    out->variant = find_kernel_variant(f16 ? "jp_activation_f16" : "jp_activation_f32");
  } else {  // Binary
    const auto* p = static_cast<const BinaryParams*>(step.params);
    work = 1;
    for (int32_t d = 0; d < p->rank; ++d) work *= static_cast<uint64_t>(p->out_dims[d]);
    out->variant = find_kernel_variant(f16 ? "jp_binary_f16" : "jp_binary_f32");
  }
  // Grid-stride kernels: enough blocks to fill every SM a few times over.
  launch_1d(work, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
