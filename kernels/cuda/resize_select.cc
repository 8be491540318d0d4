#include "kernels/cuda/select.h"
#include "kernels/resize.h"

namespace jetplan::kernels::cuda {

bool select_resize(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const ResizeParams*>(step.params);
  if (step.dtype == DType::kInt8) {
    if ((p->mode != ResizeMode::kNearest && p->mode != ResizeMode::kLinear) ||
        p->coord == ResizeCoord::kTfCropAndResize) {
      *why = "the CUDA Int8 Resize kernel takes nearest and linear modes, not tf_crop_and_resize";
      return false;
    }
    out->variant = &kernel_variant(VariantId::jp_resize_i8);
    launch_1d(count_elements(p->rank < kMaxRank ? p->rank : kMaxRank, p->out_dims), 256,
              target.sm_count * 8, out);
    return true;
  }
  return select_float_pair(step, "Resize", VariantId::jp_resize_f16, VariantId::jp_resize_f32,
                           count_elements(p->rank < kMaxRank ? p->rank : kMaxRank, p->out_dims),
                           256, target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
