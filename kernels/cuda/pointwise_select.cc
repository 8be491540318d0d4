#include "kernels/cuda/select.h"
#include "kernels/pointwise.h"

namespace jetplan::kernels::cuda {

// Pointwise (a fused elementwise chain): Float16 or Float32 storage. Four consecutive elements
// per thread where the innermost output dim allows (the x4 variants), else one.
bool select_pointwise(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "Pointwise", &f16, why)) return false;
  const auto* p = static_cast<const PointwiseParams*>(step.params);
  const uint64_t work = count_elements(p->rank, p->out_dims);
  const bool x4 = p->rank > 0 && p->out_dims[p->rank - 1] % 4 == 0;
  const VariantId id =
      f16 ? (x4 ? VariantId::jp_pointwise_chain_f16_x4 : VariantId::jp_pointwise_chain_f16)
          : (x4 ? VariantId::jp_pointwise_chain_f32_x4 : VariantId::jp_pointwise_chain_f32);
  out->variant = &kernel_variant(id);
  // Grid-stride kernels of 128-thread blocks (the variants assume it): enough blocks to fill
  // every SM several times over.
  launch_1d(x4 ? (work + 3) / 4 : work, 128, target.sm_count * 16, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
