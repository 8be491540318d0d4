#include "kernels/cuda/select.h"
#include "kernels/roi_pool.h"

namespace jetplan::kernels::cuda {

// One thread per output element (kernels/cuda/roi_pool.cu), X in Float16 or Float32; rois are
// read as Float32 and RoiAlign's batch indices as Int64 (where the step's dtypes are known).
bool select_roi_pool(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                     std::string* why) {
  const auto* p = static_cast<const RoiPoolParams*>(step.params);
  const bool align = p->mode != RoiPoolMode::kMax;
  if (step.num_inputs > 0 && step.num_inputs != (align ? 3 : 2)) {
    *why = align ? "the CUDA RoiAlign kernels read X, rois and batch_indices"
                 : "the CUDA MaxRoiPool kernels read X and rois";
    return false;
  }
  if (step.num_inputs >= 2 && step.input_dtypes[1] != DType::kFloat32) {
    *why = "the CUDA RoiPool kernels read Float32 rois";
    return false;
  }
  if (align && step.num_inputs >= 3 && step.input_dtypes[2] != DType::kInt64) {
    *why = "the CUDA RoiAlign kernels read Int64 batch indices";
    return false;
  }
  return select_float_pair(step, "RoiPool", VariantId::jp_roi_pool_f16,
                           VariantId::jp_roi_pool_f32,
                           static_cast<uint64_t>(roi_pool_outputs(*p)), 256,
                           target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
