#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/deform_conv.h"

namespace jetplan::kernels::cuda {

// One 256-thread CTA per 64x64 tile of an image and group's GEMM (kernels/cuda/deform_conv.cu).
bool select_deform_conv(const StepDesc& step, const TargetInfo&, LaunchChoice* out,
                        std::string* why) {
  const auto* p = static_cast<const DeformConvParams*>(step.params);
  if (p->dtype != DType::kFloat32 && p->dtype != DType::kFloat16) {
    *why = "the CUDA DeformConv kernels take Float32 or Float16";
    return false;
  }
  const uint64_t plane = uint64_t(p->out_h) * uint64_t(p->out_w);
  const uint64_t cout_g = uint64_t(p->out_channels / p->groups);
  const uint64_t images = uint64_t(p->batch) * uint64_t(p->groups);
  const uint64_t tiles_m = (plane + 63) / 64, tiles_n = (cout_g + 63) / 64;
  if (tiles_m > 0x7fffffffu || tiles_n > 65535 || images > 65535) {
    *why = "the DeformConv is too large for the CUDA kernel's grid (more than 65535 images times "
           "groups or output-channel tiles)";
    return false;
  }
  out->variant = &kernel_variant(p->dtype == DType::kFloat16 ? VariantId::jp_deform_conv_f16
                                                             : VariantId::jp_deform_conv_f32);
  out->grid[0] = uint32_t(std::max<uint64_t>(1, tiles_m));
  out->grid[1] = uint32_t(std::max<uint64_t>(1, tiles_n));
  out->grid[2] = uint32_t(std::max<uint64_t>(1, images));
  out->block[0] = 256;
  out->block[1] = out->block[2] = 1;
  return true;
}

}  // namespace jetplan::kernels::cuda
