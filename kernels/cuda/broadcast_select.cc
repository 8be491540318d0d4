#include "kernels/broadcast.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_broadcast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  const auto* p = static_cast<const BroadcastParams*>(step.params);
  return select_byte_mover(VariantId::jp_broadcast, p->elem_bytes,
                           count_elements(p->rank, p->out_dims), target, out, why);
}

}  // namespace jetplan::kernels::cuda
