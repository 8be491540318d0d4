#include "kernels/cuda/select.h"
#include "kernels/grid_sample.h"

namespace jetplan::kernels::cuda {

// One thread per image, sampling position and run of 8 channels (kernels/cuda/grid_sample.cu),
// X in Float16 or Float32; the grid is read as Float32 (where the step's dtypes are known).
bool select_grid_sample(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                        std::string* why) {
  const auto* p = static_cast<const GridSampleParams*>(step.params);
  if (step.num_inputs >= 2 && step.input_dtypes[1] != DType::kFloat32) {
    *why = "the CUDA GridSample kernels read a Float32 grid";
    return false;
  }
  const uint64_t runs = (static_cast<uint64_t>(p->channels) + 7) / 8;
  const uint64_t work = static_cast<uint64_t>(p->batch) * runs *
                        static_cast<uint64_t>(grid_sample_positions(*p));
  return select_float_pair(step, "GridSample", VariantId::jp_grid_sample_f16,
                           VariantId::jp_grid_sample_f32, work, 256, target.sm_count * 8, out,
                           why);
}

}  // namespace jetplan::kernels::cuda
