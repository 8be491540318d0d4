#include "kernels/cuda/select.h"
#include "kernels/pad.h"

namespace jetplan::kernels::cuda {

bool select_pad(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  const auto* p = static_cast<const PadParams*>(step.params);
  return select_byte_mover(VariantId::jp_pad, p->elem_bytes, count_elements(p->rank, p->out_dims),
                           target, out, why);
}

}  // namespace jetplan::kernels::cuda
