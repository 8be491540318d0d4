#include "kernels/cuda/select.h"
#include "kernels/cum_sum.h"

namespace jetplan::kernels::cuda {

// One thread per lane, whatever the axis' length: float32, float16, float64, int32, int64, sums
// and products alike.
bool select_cum_sum(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                    std::string* why) {
  const auto* p = static_cast<const CumSumParams*>(step.params);
  VariantId id = VariantId::jp_cum_sum_f32;
  if (p->dtype == DType::kFloat16) {
    id = VariantId::jp_cum_sum_f16;
  } else if (p->dtype == DType::kInt32) {
    id = VariantId::jp_cum_sum_i32;
  } else if (p->dtype == DType::kInt64) {
    id = VariantId::jp_cum_sum_i64;
  } else if (p->dtype == DType::kFloat64) {
    id = VariantId::jp_cum_sum_f64;
  } else if (p->dtype != DType::kFloat32) {
    *why = "no CUDA CumSum/CumProd kernel for this dtype (float32, float16, float64, int32 and "
           "int64 have one)";
    return false;
  }
  out->variant = &kernel_variant(id);
  launch_1d(static_cast<uint64_t>(p->outer) * static_cast<uint64_t>(p->inner), 128,
            target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
