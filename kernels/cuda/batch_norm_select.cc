#include "kernels/batch_norm.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_batch_norm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  const auto* p = static_cast<const BatchNormParams*>(step.params);
  return select_float_pair(step, "BatchNorm", VariantId::jp_batch_norm_f16,
                           VariantId::jp_batch_norm_f32,
                           static_cast<uint64_t>(p->batch) * p->channels * p->spatial, 256,
                           target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
