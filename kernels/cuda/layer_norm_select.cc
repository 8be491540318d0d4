#include "kernels/cuda/select.h"
#include "kernels/layer_norm.h"

namespace jetplan::kernels::cuda {

bool select_layer_norm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "LayerNorm", &f16, why)) return false;
  const auto* p = static_cast<const LayerNormParams*>(step.params);
  // With mean or inv_std_dev outputs: the block kernels (layer_norm_warp_fits says no).
  // FP16 rows of 8k elements up to 256: a group of lanes a row, a 16-byte chunk a lane (ConvNeXt-T
  // at batch 8, H200: its LayerNorms over 96 channels 45 -> 12 us in 16 lanes a row, where a
  // block a row left most of its threads idle).
  if (f16 && layer_norm_warp_fits(*p)) {
    out->variant = &kernel_variant(VariantId::jp_layer_norm_warp_f16);
    uint64_t lanes = 4;
    while (lanes * 8 < static_cast<uint64_t>(p->inner)) lanes *= 2;
    launch_1d(static_cast<uint64_t>(p->outer) * lanes, 256, target.sm_count * 16, out);
    return true;
  }
  return launch_float_pair(f16, VariantId::jp_layer_norm_f16, VariantId::jp_layer_norm_f32,
                           static_cast<uint64_t>(p->outer) * 256, 256, target.sm_count * 16, out);
}

}  // namespace jetplan::kernels::cuda
