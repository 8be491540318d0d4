#include "kernels/cuda/select.h"
#include "kernels/softmax.h"

namespace jetplan::kernels::cuda {

bool select_softmax(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                    std::string* why) {
  const auto* p = static_cast<const SoftmaxParams*>(step.params);
  if (p->inner == 1) {
    return select_float_pair(step, "Softmax", VariantId::jp_softmax_rows_f16,
                             VariantId::jp_softmax_rows_f32, static_cast<uint64_t>(p->outer) * 32,
                             256, target.sm_count * 16, out, why);
  }
  return select_float_pair(step, "Softmax", VariantId::jp_softmax_f16, VariantId::jp_softmax_f32,
                           static_cast<uint64_t>(p->outer) * p->inner, 256, target.sm_count * 8,
                           out, why);
}

}  // namespace jetplan::kernels::cuda
