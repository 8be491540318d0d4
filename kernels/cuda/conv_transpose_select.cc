#include "kernels/conv_transpose.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

// ConvTranspose: NCHW (the params have no channels-last form), 1-3 spatial dims, any groups,
// Float16 storage (FP32 accumulation) or Float32; one thread per output element.
bool select_conv_transpose(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                           std::string* why) {
  const auto* p = static_cast<const ConvTransposeParams*>(step.params);
  bool f16 = false;
  if (!float_storage(step, "ConvTranspose", &f16, why)) return false;
  if (p->spatial_rank < 1 || p->spatial_rank > 3 || p->groups < 1) {
    *why = "the CUDA ConvTranspose kernels take 1 to 3 spatial dims";
    return false;
  }
  // Non-overlapping 2-D upsampling (kernel == stride, no pads, groups 1: the U-Net's 2x2
  // stride 2): the tiled kernel, 8 output channels x 4 input columns per thread.
  bool upsample = p->spatial_rank == 2 && p->groups == 1;
  for (int32_t d = 0; d < 2 && upsample; ++d) {
    upsample = p->stride[d] >= 1 && p->kernel[d] == p->stride[d] && p->dilation[d] == 1 &&
               p->pad_begin[d] == 0 && p->out_size[d] == p->in_size[d] * p->stride[d];
  }
  if (upsample) {
    const uint64_t work =
        static_cast<uint64_t>(p->batch) * ((static_cast<uint64_t>(p->out_channels) + 7) / 8) *
        static_cast<uint64_t>(p->out_size[0]) * static_cast<uint64_t>(p->stride[1]) *
        ((static_cast<uint64_t>(p->in_size[1]) + 3) / 4);
    return launch_float_pair(f16, VariantId::jp_conv_transpose_upsample_f16,
                             VariantId::jp_conv_transpose_upsample_f32, work, 128,
                             target.sm_count * 32, out);
  }
  uint64_t work = static_cast<uint64_t>(p->batch) * static_cast<uint64_t>(p->out_channels);
  for (int32_t d = 0; d < p->spatial_rank; ++d) work *= static_cast<uint64_t>(p->out_size[d]);
  return launch_float_pair(f16, VariantId::jp_conv_transpose_f16, VariantId::jp_conv_transpose_f32,
                           work, 256, target.sm_count * 16, out);
}

}  // namespace jetplan::kernels::cuda
