#include "kernels/cuda/select.h"
#include "kernels/pad.h"

namespace jetplan::kernels::cuda {

bool select_pad(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  return select_dense_byte_mover<PadParams>(VariantId::jp_pad, step, target, out, why);
}

}  // namespace jetplan::kernels::cuda
