#include "kernels/binary.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_binary(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const BinaryParams*>(step.params);
  // Grid-stride kernels: enough blocks to fill every SM a few times over.
  return select_float_pair(step, "pointwise", VariantId::jp_binary_f16, VariantId::jp_binary_f32,
                           count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out,
                           why);
}

}  // namespace jetplan::kernels::cuda
