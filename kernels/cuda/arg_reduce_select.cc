#include "kernels/arg_reduce.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

// One thread per output (kernels/cuda/arg_reduce.cu), at most 8 blocks of 256 an SM.
bool select_arg_reduce(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                       std::string* why) {
  const auto* p = static_cast<const ArgReduceParams*>(step.params);
  return select_float_pair(step, "ArgReduce", VariantId::jp_arg_reduce_f16,
                           VariantId::jp_arg_reduce_f32,
                           static_cast<uint64_t>(p->outer) * static_cast<uint64_t>(p->inner), 256,
                           target.sm_count * 8, out, why);
}

}  // namespace jetplan::kernels::cuda
