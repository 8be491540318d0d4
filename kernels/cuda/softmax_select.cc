#include "kernels/cuda/select.h"
#include "kernels/softmax.h"

namespace jetplan::kernels::cuda {

bool select_softmax(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                    std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "Softmax", &f16, why)) return false;
  const auto* p = static_cast<const SoftmaxParams*>(step.params);
  if (p->inner == 1) {
    out->variant =
        &kernel_variant(f16 ? VariantId::jp_softmax_rows_f16 : VariantId::jp_softmax_rows_f32);
    launch_1d(static_cast<uint64_t>(p->outer) * 32, 256, target.sm_count * 16, out);
    return true;
  }
  out->variant = &kernel_variant(f16 ? VariantId::jp_softmax_f16 : VariantId::jp_softmax_f32);
  launch_1d(static_cast<uint64_t>(p->outer) * p->inner, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
