#include "kernels/activation.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_activation(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "pointwise", &f16, why)) return false;
  const auto* p = static_cast<const ActivationParams*>(step.params);
  out->variant = &kernel_variant(f16 ? VariantId::jp_activation_f16 : VariantId::jp_activation_f32);
  // Grid-stride kernels: enough blocks to fill every SM a few times over.
  launch_1d(static_cast<uint64_t>(p->count), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
