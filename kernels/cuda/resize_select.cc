#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/resize.h"

namespace jetplan::kernels::cuda {

// Rank 4 (every GPU plan's image Resize) takes the pixel-run kernels: a thread per output pixel
// and 8 elements of the last dim (resize.cu for_each_pixel_run), the same bits as the
// element-wise ones, which take the other ranks.
bool select_resize(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const ResizeParams*>(step.params);
  const bool pixels = p->rank == 4;
  uint64_t work = count_elements(p->rank < kMaxRank ? p->rank : kMaxRank, p->out_dims);
  if (pixels) work = work / uint64_t(std::max<int64_t>(1, p->out_dims[3])) *
                     ceil_div_u32(uint64_t(std::max<int64_t>(1, p->out_dims[3])), 8);
  if (step.dtype == DType::kInt8) {
    if ((p->mode != ResizeMode::kNearest && p->mode != ResizeMode::kLinear) ||
        p->coord == ResizeCoord::kTfCropAndResize) {
      *why = "the CUDA Int8 Resize kernel takes nearest and linear modes, not tf_crop_and_resize";
      return false;
    }
    out->variant =
        &kernel_variant(pixels ? VariantId::jp_resize_pixels_i8 : VariantId::jp_resize_i8);
    launch_1d(work, 256, target.sm_count * 8, out);
    return true;
  }
  if (pixels)
    return select_float_pair(step, "Resize", VariantId::jp_resize_pixels_f16,
                             VariantId::jp_resize_pixels_f32, work, 256, target.sm_count * 8, out,
                             why);
  return select_float_pair(step, "Resize", VariantId::jp_resize_f16, VariantId::jp_resize_f32,
                           work, 256, target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
