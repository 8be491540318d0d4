#include <algorithm>

#include "kernels/binary.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_binary(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                   std::string* why) {
  const auto* p = static_cast<const BinaryParams*>(step.params);
  // An Int8 Add's step dtype is its Float32 scales' (the converter picks a floating tensor's):
  // input 0 tells.
  if (step.dtype == DType::kInt8 || (step.num_inputs > 0 && step.input_dtypes[0] == DType::kInt8)) {
    if (p->op != BinaryOp::kAdd) {
      *why = "the CUDA Int8 Binary kernel takes Add only";
      return false;
    }
    out->variant = &kernel_variant(VariantId::jp_binary_add_i8);
    launch_1d(count_elements(p->rank, p->out_dims), 256, target.sm_count * 8, out);
    return true;
  }
  // Grid-stride kernels: enough blocks to fill every SM a few times over. Float16 steps with
  // more elements than those blocks' threads, of the 8-wide form (binary_x8_fits), take it:
  // eight outputs a thread (EfficientNet-B0's squeeze-excitation Muls at batch 8, H200: 37 ->
  // 14 us); smaller ones run faster a thread an element.
  const bool y8 = step.num_outputs > 0 && step.output_dtypes[0] == DType::kInt8;
  const uint64_t count = count_elements(p->rank, p->out_dims);
  if (step.dtype == DType::kFloat16 && binary_x8_fits(*p) &&
      count > 256ull * 8 * std::max<uint32_t>(1, target.sm_count)) {
    out->variant = &kernel_variant(y8 ? VariantId::jp_binary_q8_x8_f16 : VariantId::jp_binary_x8_f16);
    launch_1d(count / 8, 256, target.sm_count * 8, out);
    return true;
  }
  if (y8)  // float into Int8
    return select_float_pair(step, "Binary into Int8", VariantId::jp_binary_q8_f16,
                             VariantId::jp_binary_q8_f32, count, 256, target.sm_count * 8, out,
                             why);
  return select_float_pair(step, "pointwise", VariantId::jp_binary_f16, VariantId::jp_binary_f32,
                           count, 256, target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
