// DynamicQuantize selection: one block of 1024 threads (kernels/cuda/dynamic_quantize.cu), x
// Float32 or Float16, y UInt8.
#include "kernels/cuda/select.h"
#include "kernels/dynamic_quantize.h"

namespace jetplan::kernels::cuda {

bool select_dynamic_quantize(const StepDesc& step, const TargetInfo&, LaunchChoice* out,
                             std::string* why) {
  const bool f16 = step.num_inputs > 0 && step.input_dtypes[0] == DType::kFloat16;
  if (!f16 && (step.num_inputs < 1 || step.input_dtypes[0] != DType::kFloat32)) {
    *why = "the CUDA DynamicQuantizeLinear kernels take Float32 or Float16 x";
    return false;
  }
  out->variant = &kernel_variant(f16 ? VariantId::jp_dynamic_quantize_f16
                                     : VariantId::jp_dynamic_quantize_f32);
  out->grid[0] = out->grid[1] = out->grid[2] = 1;
  out->block[0] = 1024;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = 0;
  return true;
}

}  // namespace jetplan::kernels::cuda
