#include "kernels/cuda/select.h"
#include "kernels/where.h"

namespace jetplan::kernels::cuda {

bool select_where(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  return select_dense_byte_mover<WhereParams>(VariantId::jp_where, step, target, out, why);
}

}  // namespace jetplan::kernels::cuda
