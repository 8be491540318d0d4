#include "kernels/cuda/select.h"
#include "kernels/layer_norm.h"

namespace jetplan::kernels::cuda {

bool select_layer_norm(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  bool f16 = false;
  if (!float_storage(step, "LayerNorm", &f16, why)) return false;
  const auto* p = static_cast<const LayerNormParams*>(step.params);
  // Into Int8 (an INT8 plan's LayerNorm in front of an INT8 GEMM): the same kernels' _q8 forms.
  const bool q8 = layer_norm_to_int8(*p);
  // With mean or inv_std_dev outputs: the block kernels (layer_norm_warp_fits says no).
  // FP16 rows of 8k elements up to 256: a group of lanes a row, a 16-byte chunk a lane (ConvNeXt-T
  // at batch 8, H200: its LayerNorms over 96 channels 45 -> 12 us in 16 lanes a row, where a
  // block a row left most of its threads idle).
  if (f16 && layer_norm_warp_fits(*p)) {
    out->variant = &kernel_variant(q8 ? VariantId::jp_layer_norm_warp_q8_f16
                                      : VariantId::jp_layer_norm_warp_f16);
    uint64_t lanes = 4;
    while (lanes * 8 < static_cast<uint64_t>(p->inner)) lanes *= 2;
    launch_1d(static_cast<uint64_t>(p->outer) * lanes, 256, target.sm_count * 16, out);
    return true;
  }
  if (q8)
    return launch_float_pair(f16, VariantId::jp_layer_norm_q8_f16, VariantId::jp_layer_norm_q8_f32,
                             static_cast<uint64_t>(p->outer) * 256, 256, target.sm_count * 16,
                             out);
  return launch_float_pair(f16, VariantId::jp_layer_norm_f16, VariantId::jp_layer_norm_f32,
                           static_cast<uint64_t>(p->outer) * 256, 256, target.sm_count * 16, out);
}

}  // namespace jetplan::kernels::cuda
