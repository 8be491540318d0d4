#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

// Pointwise (a fused elementwise chain): Float16 or Float32 storage. Four consecutive elements
// per thread where the innermost output dim allows (the x4 variants), else one.
bool select_pointwise_chain(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                            std::string* why) {
  const bool f16 = step.dtype == DType::kFloat16;
  if (!f16 && step.dtype != DType::kFloat32) {
    *why = "the CUDA Pointwise kernels take Float16 or Float32";
    return false;
  }
  const auto* p = static_cast<const PointwiseParams*>(step.params);
  uint64_t work = 1;
  for (int32_t d = 0; d < p->rank; ++d) work *= static_cast<uint64_t>(p->out_dims[d]);
  const bool x4 = p->rank > 0 && p->out_dims[p->rank - 1] % 4 == 0;
  const char* name = f16 ? (x4 ? "jp_pointwise_chain_f16_x4" : "jp_pointwise_chain_f16")
                         : (x4 ? "jp_pointwise_chain_f32_x4" : "jp_pointwise_chain_f32");
  out->variant = find_kernel_variant(name);
  // Grid-stride kernels of 128-thread blocks (the variants assume it): enough blocks to fill
  // every SM several times over.
  launch_1d(x4 ? (work + 3) / 4 : work, 128, target.sm_count * 16, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
