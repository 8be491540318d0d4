#include "kernels/cuda/select.h"
#include "kernels/lrn.h"

namespace jetplan::kernels::cuda {

// One thread per output element (kernels/cuda/lrn.cu), at most 8 blocks of 256 an SM.
bool select_lrn(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  const auto* p = static_cast<const LrnParams*>(step.params);
  const uint64_t count = static_cast<uint64_t>(p->batch) * static_cast<uint64_t>(p->channels) *
                         static_cast<uint64_t>(p->spatial);
  return select_float_pair(step, "Lrn", VariantId::jp_lrn_f16, VariantId::jp_lrn_f32, count, 256,
                           target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
