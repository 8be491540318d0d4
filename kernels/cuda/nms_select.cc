#include <algorithm>
#include <cstdint>

#include "kernels/cuda/select.h"
#include "kernels/nms.h"

namespace jetplan::kernels::cuda {

// One 256-thread block per (batch, class) segment, up to 65535 blocks (more segments: each block
// takes several). The sort keys of a segment go to dynamic shared memory when they fit beside
// the kernel's own 9 KB; otherwise each block sorts in its row of the workspace, and the grid
// is held to one block an SM, so that workspace stays sm_count rows.
bool select_nms(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                std::string* why) {
  const auto* p = static_cast<const NmsParams*>(step.params);
  if (step.dtype != DType::kFloat32) {
    *why = "the CUDA NonMaxSuppression kernel reads Float32 boxes and scores";
    return false;
  }
  if (p->num_boxes > INT32_MAX) {
    *why = "the CUDA NonMaxSuppression kernel takes at most 2^31 - 1 boxes";
    return false;
  }
  constexpr uint32_t kOwnShared = 16 * 1024;
  const uint64_t key_bytes = static_cast<uint64_t>(nms_sort_keys(*p)) * 8;
  const bool in_shared = key_bytes + kOwnShared <= target.max_shared_per_block;
  const uint64_t segments = static_cast<uint64_t>(std::max<int64_t>(1, p->batch * p->num_classes));
  const uint64_t most = in_shared ? 65535 : std::max<uint32_t>(1, target.sm_count);
  out->variant = &kernel_variant(VariantId::jp_nms_f32);
  out->block[0] = 256;
  out->grid[0] = static_cast<uint32_t>(std::min(segments, most));
  out->shared_bytes = in_shared ? static_cast<uint32_t>(key_bytes) : 0;
  out->workspace_bytes =
      static_cast<uint64_t>(nms_workspace(*p, out->grid[0], in_shared).words) * 8;
  return true;
}

}  // namespace jetplan::kernels::cuda
