#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/group_norm.h"

namespace jetplan::kernels::cuda {

// One 256-thread block per (batch, group) (kernels/cuda/group_norm.cu), at most 16 blocks an SM
// (the rest grid-stride).
bool select_group_norm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  const auto* p = static_cast<const GroupNormParams*>(step.params);
  const uint64_t rows = static_cast<uint64_t>(p->batch) * static_cast<uint64_t>(p->groups);
  return select_float_pair(step, "GroupNorm", VariantId::jp_group_norm_f16,
                           VariantId::jp_group_norm_f32, rows * 256, 256,
                           std::max<uint32_t>(1, target.sm_count) * 16, out, why);
}

}  // namespace jetplan::kernels::cuda
