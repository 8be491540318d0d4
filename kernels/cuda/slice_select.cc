#include "kernels/cuda/select.h"
#include "kernels/slice.h"

namespace jetplan::kernels::cuda {

bool select_slice(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                  std::string* why) {
  const auto* p = static_cast<const SliceParams*>(step.params);
  const int64_t e = p->elem_bytes;
  if (e != 1 && e != 2 && e != 4 && e != 8) {
    *why = "the CUDA Slice kernel moves elements of 1, 2, 4 or 8 bytes";
    return false;
  }
  out->variant = &kernel_variant(VariantId::jp_slice);
  launch_1d(count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
