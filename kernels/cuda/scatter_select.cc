#include "kernels/cuda/select.h"
#include "kernels/scatter.h"

namespace jetplan::kernels::cuda {

// One thread per output element (kernels/cuda/scatter.cu), each walking the updates that can land
// on it: index_dims[axis] of them for ScatterElements, every index tuple (k indices each) for
// ScatterND. The walks are bounded by kScatterMaxWalk index reads in all (milliseconds of an
// Orin's time at worst); a larger scatter is refused, naming the sizes, rather than run
// in an order the CPU twin would not reproduce.
bool select_scatter(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                    std::string* why) {
  const auto* p = static_cast<const ScatterParams*>(step.params);
  if (p->index_dtype != DType::kInt32 && p->index_dtype != DType::kInt64) {
    *why = "the CUDA Scatter kernel takes Int32 or Int64 indices";
    return false;
  }
  if (p->reduction == ScatterReduction::kNone
          ? p->elem_bytes != 1 && p->elem_bytes != 2 && p->elem_bytes != 4 && p->elem_bytes != 8
          : !scatter_reduces(p->reduction, p->dtype)) {
    *why = "the CUDA Scatter kernel moves elements of 1, 2, 4 or 8 bytes and reduces Float16, "
           "Float32, Float64, Int32 or Int64";
    return false;
  }
  const uint64_t elements = count_elements(p->rank, p->data_dims);
  const uint64_t walk = scatter_walk_reads(*p);
  if (walk != 0 && elements > kScatterMaxWalk / walk) {
    *why = "the CUDA Scatter kernel walks " + std::to_string(walk) + " index reads for each of " +
           std::to_string(elements) + " output elements, more than its bound of " +
           std::to_string(kScatterMaxWalk) + " in all (run on the CPU target)";
    return false;
  }
  out->variant = &kernel_variant(VariantId::jp_scatter);
  launch_1d(elements, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
