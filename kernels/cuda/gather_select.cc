#include "kernels/cuda/select.h"
#include "kernels/gather.h"

namespace jetplan::kernels::cuda {

bool select_gather(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const GatherParams*>(step.params);
  if (p->index_dtype != DType::kInt32 && p->index_dtype != DType::kInt64) {
    *why = "the CUDA Gather kernel takes Int32 or Int64 indices";
    return false;
  }
  out->variant = &kernel_variant(VariantId::jp_gather);
  // Units of up to 16 bytes; size the grid for 4-byte units.
  launch_1d(static_cast<uint64_t>(p->outer) * p->num_indices * p->inner * p->elem_bytes / 4 + 1,
            256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
