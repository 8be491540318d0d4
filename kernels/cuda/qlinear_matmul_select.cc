// QLinearMatMul selection (kernels/cuda/qlinear_matmul.cu): one thread per output element,
// grid-stride.
#include "kernels/qlinear_matmul.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_qlinear_matmul(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                           std::string*) {
  const auto& p = *static_cast<const QLinearMatMulParams*>(step.params);
  out->variant = &kernel_variant(VariantId::jp_qlinear_matmul);
  launch_1d(static_cast<uint64_t>(p.batch * p.M * p.N), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
