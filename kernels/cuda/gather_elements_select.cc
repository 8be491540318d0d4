#include "kernels/cuda/select.h"
#include "kernels/gather_elements.h"

namespace jetplan::kernels::cuda {

// One thread per output element (kernels/cuda/gather_elements.cu), at most 8 blocks of 256 an SM.
bool select_gather_elements(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                            std::string* why) {
  const auto* p = static_cast<const GatherElementsParams*>(step.params);
  if (p->index_dtype != DType::kInt32 && p->index_dtype != DType::kInt64) {
    *why = "the CUDA GatherElements kernel takes Int32 or Int64 indices";
    return false;
  }
  if (p->elem_bytes != 1 && p->elem_bytes != 2 && p->elem_bytes != 4 && p->elem_bytes != 8) {
    *why = "the CUDA GatherElements kernel moves elements of 1, 2, 4 or 8 bytes";
    return false;
  }
  out->variant = &kernel_variant(VariantId::jp_gather_elements);
  launch_1d(count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
