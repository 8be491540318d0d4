// QLinearConv selection (kernels/cuda/qlinear_conv.cu): one thread per output element, grid-stride.
#include "kernels/qlinear_conv.h"
#include "kernels/cuda/select.h"

namespace jetplan::kernels::cuda {

bool select_qlinear_conv(const StepDesc& step, const TargetInfo& target, LaunchChoice* out,
                         std::string*) {
  const auto& p = *static_cast<const QLinearConvParams*>(step.params);
  out->variant = &kernel_variant(VariantId::jp_qlinear_conv);
  uint64_t outputs = static_cast<uint64_t>(p.conv.batch * p.conv.out_channels);
  for (int d = 0; d < p.conv.spatial_rank && d < 3; ++d)
    outputs *= static_cast<uint64_t>(p.conv.out_size[d]);
  launch_1d(outputs, 256, target.sm_count * 8, out);
  return true;
}

}  // namespace jetplan::kernels::cuda
