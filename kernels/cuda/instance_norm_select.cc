#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/instance_norm.h"

namespace jetplan::kernels::cuda {

// One 256-thread block per (batch, channel) (kernels/cuda/instance_norm.cu), at most 16 blocks
// an SM (the rest grid-stride).
bool select_instance_norm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                          std::string* why) {
  const auto* p = static_cast<const InstanceNormParams*>(step.params);
  const uint64_t rows = static_cast<uint64_t>(p->batch) * static_cast<uint64_t>(p->channels);
  return select_float_pair(step, "InstanceNorm", VariantId::jp_instance_norm_f16,
                           VariantId::jp_instance_norm_f32, rows * 256, 256,
                           std::max<uint32_t>(1, target.sm_count) * 16, out, why);
}

}  // namespace jetplan::kernels::cuda
