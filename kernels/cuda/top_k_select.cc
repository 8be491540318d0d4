#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/top_k.h"

namespace jetplan::kernels::cuda {

// One 256-thread block per row (kernels/cuda/top_k.cu), at most 16 blocks an SM (the rest
// grid-stride).
bool select_top_k(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  const auto* p = static_cast<const TopKParams*>(step.params);
  const uint64_t rows = static_cast<uint64_t>(p->outer) * static_cast<uint64_t>(p->inner);
  return select_float_pair(step, "TopK", VariantId::jp_top_k_f16, VariantId::jp_top_k_f32,
                           rows * 256, 256, std::max<uint32_t>(1, target.sm_count) * 16, out,
                           why);
}

}  // namespace jetplan::kernels::cuda
