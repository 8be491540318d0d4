#include "kernels/batch_norm.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_batch_norm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "BatchNorm", &f16, why)) return false;
  const auto* p = static_cast<const BatchNormParams*>(step.params);
  out->variant = &kernel_variant(f16 ? VariantId::jp_batch_norm_f16 : VariantId::jp_batch_norm_f32);
  launch_1d(static_cast<uint64_t>(p->batch) * p->channels * p->spatial, 256, target.sm_count * 8,
            out);
  return true;
}

}  // namespace jetplan::kernels::cuda
