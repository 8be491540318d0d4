#include "kernels/cuda/select.h"
#include "kernels/reduce.h"

namespace jetplan::kernels::cuda {

bool select_reduce(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const ReduceParams*>(step.params);
  uint64_t out_count = 1;
  for (int32_t d = 0; d < p->rank && d < kMaxRank; ++d)
    if (!(p->axis_mask >> d & 1u)) out_count *= static_cast<uint64_t>(p->in_dims[d]);
  if (step.dtype == DType::kFloat64) {  // accumulated in double, as the twin does
    out->variant = &kernel_variant(VariantId::jp_reduce_f64);
    launch_1d(out_count, 256, target.sm_count * 8, out);
    return true;
  }
  return select_float_pair(step, "Reduce", VariantId::jp_reduce_f16, VariantId::jp_reduce_f32,
                           out_count, 256, target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
