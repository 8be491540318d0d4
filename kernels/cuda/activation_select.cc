#include "kernels/activation.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_activation(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  const auto* p = static_cast<const ActivationParams*>(step.params);
  // Grid-stride kernels: enough blocks to fill every SM a few times over.
  return select_float_pair(step, "pointwise", VariantId::jp_activation_f16,
                           VariantId::jp_activation_f32, static_cast<uint64_t>(p->count), 256,
                           target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
