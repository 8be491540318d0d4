#include "kernels/cuda/select.h"
#include "kernels/resize.h"

namespace jetplan::kernels::cuda {

bool select_resize(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "Resize", &f16, why)) return false;
  const auto* p = static_cast<const ResizeParams*>(step.params);
  uint64_t count = 1;
  for (int32_t d = 0; d < p->rank && d < kMaxRank; ++d)
    count *= static_cast<uint64_t>(p->out_dims[d]);
  out->variant = &kernel_variant(f16 ? VariantId::jp_resize_f16 : VariantId::jp_resize_f32);
  launch_1d(count, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
