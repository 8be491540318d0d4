#include "kernels/concat.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_concat(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string*) {
  const auto* p = static_cast<const ConcatParams*>(step.params);
  uint64_t total = 0;
  for (int32_t k = 0; k < p->num_inputs && k < kMaxConcatInputs; ++k)
    total += static_cast<uint64_t>(p->axis_len[k]);
  out->variant = &kernel_variant(VariantId::jp_concat);
  // The kernel moves units of up to 16 bytes; size the grid for 4-byte units.
  launch_1d(static_cast<uint64_t>(p->outer) * total * p->inner * p->elem_bytes / 4 + 1, 256,
            target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
