#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/max_unpool.h"

namespace jetplan::kernels::cuda {

// One cooperative grid of at most four 256-thread blocks an SM (every block resident at once,
// which the barrier needs), grid-striding over x and y; its workspace the winner words and the
// barrier's counter.
bool select_max_unpool(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  const auto* p = static_cast<const MaxUnpoolParams*>(step.params);
  VariantId id = VariantId::jp_max_unpool_b4;
  if (p->elem_bytes == 2) {
    id = VariantId::jp_max_unpool_b2;
  } else if (p->elem_bytes == 8) {
    id = VariantId::jp_max_unpool_b8;
  } else if (p->elem_bytes != 4) {
    *why = "the CUDA MaxUnpool kernel moves elements of 2, 4 or 8 bytes";
    return false;
  }
  constexpr int64_t kMaxCount = (int64_t{1} << 31) - 2;  // k + 1 fits an int32
  if (p->x_count > kMaxCount || p->y_count > kMaxCount) {
    *why = "the CUDA MaxUnpool kernel takes fewer than 2^31 - 1 elements of x and of y";
    return false;
  }
  out->variant = &kernel_variant(id);
  const uint64_t work = uint64_t(std::max(p->x_count, p->y_count));
  launch_1d(std::max<uint64_t>(work, 1), 256, std::max<uint32_t>(1, target.sm_count) * 4, out);
  out->workspace_bytes = (uint64_t(p->y_count) + 1) * sizeof(int32_t);
  return true;
}

}  // namespace jetplan::kernels::cuda
