#include "kernels/cuda/select.h"
#include "kernels/pointwise.h"

namespace jetplan::kernels::cuda {

// Pointwise (a fused elementwise chain): Float16 or Float32 storage. Where the innermost output
// dim allows, eight consecutive elements per thread (Float16: 16-byte loads and stores, the
// launch's shared memory a slot per register pointwise_spilled() names) or four; else one.
bool select_pointwise(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                      std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "Pointwise", &f16, why)) return false;
  const auto* p = static_cast<const PointwiseParams*>(step.params);
  const uint64_t work = count_elements(p->rank, p->out_dims);
  const bool ranked = p->rank > 0;
  const int64_t inner = ranked ? p->out_dims[p->rank - 1] : 1;
  const int per_thread = ranked && f16 && inner % 8 == 0 ? 8 : ranked && inner % 4 == 0 ? 4 : 1;
  const VariantId id = per_thread == 8 ? VariantId::jp_pointwise_chain_f16_x8
                       : f16 ? (per_thread == 4 ? VariantId::jp_pointwise_chain_f16_x4
                                                : VariantId::jp_pointwise_chain_f16)
                             : (per_thread == 4 ? VariantId::jp_pointwise_chain_f32_x4
                                                : VariantId::jp_pointwise_chain_f32);
  out->variant = &kernel_variant(id);
  // Grid-stride kernels of 128-thread blocks (the variants assume it): enough blocks to fill
  // every SM several times over.
  launch_1d((work + per_thread - 1) / per_thread, 128, target.sm_count * 16, out);
  if (per_thread == 8)
    out->shared_bytes = static_cast<uint32_t>(__builtin_popcount(pointwise_spilled(*p))) *
                        kPointwiseSlotBytes;
  return true;
}

}  // namespace jetplan::kernels::cuda
