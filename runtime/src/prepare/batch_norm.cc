// BatchNorm: inference-time batch normalization per channel (NCHW, or NHWC in GPU plans).
#include "runtime/src/cpu/step_tensors.h"
#include "runtime/src/prepare/op_families.h"
#include "runtime/src/prepare/prepare_util.h"

namespace jetplan::rt {

Status prepare_batch_norm(const jp_plan& plan, const fb::BatchNormParams& p, PreparedStep* s) {
  JP_RETURN_IF_ERROR(check_float_inputs(plan, *s, "BatchNorm", 5));
  const TensorInfo& x = input_at(plan, *s, 0);
  const TensorInfo& y = output_at(plan, *s, 0);
  if (!same_shape(x, y) || x.rank < 2 || channels_last(x) != channels_last(y)) {
    return invalid(*s, "input must be [N, C, ...] (or [N, ..., C] NHWC) like the output");
  }
  for (uint32_t i = 1; i < 5; ++i) {
    JP_RETURN_IF_ERROR(check_elements(*s, input_at(plan, *s, i), channel_dim(x),
                                      "scale, bias, mean and var need one value per channel"));
  }
  kernels::BatchNormParams& k = fresh_params(&s->params.batch_norm);
  k.batch = x.dims[0];
  k.channels = channel_dim(x);
  k.spatial = static_cast<int64_t>(x.elements) / (k.batch * k.channels);
  k.epsilon = p.epsilon();
  k.channels_last = channels_last(x);
  return JP_OK;
}

void run_batch_norm_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::batch_norm(s.params.batch_norm, in_f32(s, tensors, 0), in_f32(s, tensors, 1),
                           in_f32(s, tensors, 2), in_f32(s, tensors, 3), in_f32(s, tensors, 4),
                           out_f32(s, tensors));
}

}  // namespace jetplan::rt
