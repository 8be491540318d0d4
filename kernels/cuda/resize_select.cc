#include <algorithm>

#include "kernels/cuda/select.h"
#include "kernels/resize.h"
#include "kernels/resize_math.h"

namespace jetplan::kernels::cuda {

// H and W of an NHWC image, nearest or linear (resize_math::resizes_hw_only: every GPU plan's
// usual image Resize) take the row-tile kernels, a thread per 16 bytes of channels (or one
// element where C is not a multiple of those) with the taps in registers; the other rank-4
// steps the pixel-run kernels, a thread per output pixel and 8 elements of the last dim
// (resize.cu for_each_pixel_run); the other ranks the element-wise ones. All give the same bits.
bool select_resize(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const ResizeParams*>(step.params);
  const bool hw = resize_math::resizes_hw_only(*p);
  const bool pixels = p->rank == 4;
  uint64_t work = count_elements(p->rank < kMaxRank ? p->rank : kMaxRank, p->out_dims);
  if (pixels) {
    // hw: one item a thread per 16 bytes of channels (a block takes whole tiles of a row);
    // pixels: 8 elements a thread.
    const uint64_t c = uint64_t(std::max<int64_t>(1, p->out_dims[3]));
    const uint64_t elem = step.dtype == DType::kInt8 ? 1 : step.dtype == DType::kFloat32 ? 4 : 2;
    const uint64_t run = hw ? (c % (16 / elem) == 0 ? 16 / elem : 1) : 8;
    work = work / c * ceil_div_u32(c, run);
  }
  if (step.dtype == DType::kInt8) {
    if ((p->mode != ResizeMode::kNearest && p->mode != ResizeMode::kLinear) ||
        p->coord == ResizeCoord::kTfCropAndResize) {
      *why = "the CUDA Int8 Resize kernel takes nearest and linear modes, not tf_crop_and_resize";
      return false;
    }
    out->variant = &kernel_variant(hw       ? VariantId::jp_resize_hw_i8
                                   : pixels ? VariantId::jp_resize_pixels_i8
                                            : VariantId::jp_resize_i8);
    launch_1d(work, 256, target.sm_count * 8, out);
    return true;
  }
  if (hw)
    return select_float_pair(step, "Resize", VariantId::jp_resize_hw_f16,
                             VariantId::jp_resize_hw_f32, work, 256, target.sm_count * 8, out,
                             why);
  if (pixels)
    return select_float_pair(step, "Resize", VariantId::jp_resize_pixels_f16,
                             VariantId::jp_resize_pixels_f32, work, 256, target.sm_count * 8, out,
                             why);
  return select_float_pair(step, "Resize", VariantId::jp_resize_f16, VariantId::jp_resize_f32,
                           work, 256, target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
