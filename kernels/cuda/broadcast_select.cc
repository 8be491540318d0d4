#include "kernels/broadcast.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_broadcast(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  return select_dense_byte_mover<BroadcastParams>(VariantId::jp_broadcast, step, target, out, why);
}

}  // namespace jetplan::kernels::cuda
