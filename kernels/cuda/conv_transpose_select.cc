#include "kernels/cuda/select.h"
#include "kernels/params_nn.h"

namespace jetplan::kernels::cuda {

// ConvTranspose: NCHW (the params have no channels-last form), 1-3 spatial dims, any groups,
// Float16 storage (FP32 accumulation) or Float32; one thread per output element.
bool select_conv_transpose(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                           std::string* why) {
  const auto* p = static_cast<const ConvTransposeParams*>(step.params);
  const bool f16 = step.dtype == DType::kFloat16;
  if (!f16 && step.dtype != DType::kFloat32) {
    *why = "the CUDA ConvTranspose kernels take Float16 or Float32";
    return false;
  }
  if (p->spatial_rank < 1 || p->spatial_rank > 3 || p->groups < 1) {
    *why = "the CUDA ConvTranspose kernels take 1 to 3 spatial dims";
    return false;
  }
  uint64_t work = static_cast<uint64_t>(p->batch) * static_cast<uint64_t>(p->out_channels);
  for (int32_t d = 0; d < p->spatial_rank; ++d) work *= static_cast<uint64_t>(p->out_size[d]);
  out->variant = find_kernel_variant(f16 ? "jp_conv_transpose_f16" : "jp_conv_transpose_f32");
  launch_1d(work, 256, target.sm_count * 16, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
