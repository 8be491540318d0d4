// Params tables of the nn op families.
#include "converter/src/serialize_groups.h"

namespace jetplan::converter {

bool serialize_nn(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step,
                  StepParamsOffset* out) {
  const OpDesc& op = step.op;
  const NnDesc& nn = op.nn;
  const fb::Activation act{op.act.kind, op.act.alpha, op.act.beta};
  switch (op.family) {
    case fb::OpFamily::ConvTranspose: {
      auto p = fb::CreateConvTransposeParamsDirect(
          fbb, op.groups, &op.kernel, &op.stride, &op.dilation, &op.pad_begin, &op.pad_end,
          &nn.output_padding, nn.has_bias, op.has_residual, &act);
      *out = {fb::StepParams::ConvTransposeParams, p.Union()};
      return true;
    }
    case fb::OpFamily::Resize: {
      auto p = fb::CreateResizeParamsDirect(
          fbb, nn.resize_mode, nn.coord, nn.nearest, &nn.scale, &nn.resized_length, &nn.roi_start,
          &nn.roi_end, nn.cubic_coeff_a, nn.exclude_outside, nn.extrapolation_value);
      *out = {fb::StepParams::ResizeParams, p.Union()};
      return true;
    }
    case fb::OpFamily::Reduce:
      *out = {fb::StepParams::ReduceParams,
              fb::CreateReduceParamsDirect(fbb, nn.reduce_op, &nn.axes).Union()};
      return true;
    case fb::OpFamily::ArgReduce:
      *out = {fb::StepParams::ArgReduceParams,
              fb::CreateArgReduceParams(fbb, nn.arg_kind, op.axis, nn.select_last_index).Union()};
      return true;
    case fb::OpFamily::TopK:
      *out = {fb::StepParams::TopKParams, fb::CreateTopKParams(fbb, op.axis, nn.largest).Union()};
      return true;
    case fb::OpFamily::InstanceNorm:
      *out = {fb::StepParams::InstanceNormParams,
              fb::CreateInstanceNormParams(fbb, op.epsilon, &act).Union()};
      return true;
    case fb::OpFamily::LayerNorm:
      *out = {fb::StepParams::LayerNormParams,
              fb::CreateLayerNormParams(fbb, op.axis, op.epsilon, nn.has_bias, nn.has_mean,
                                        nn.has_inv_std_dev, &act)
                  .Union()};
      return true;
    case fb::OpFamily::GroupNorm:
      *out = {
          fb::StepParams::GroupNormParams,
          fb::CreateGroupNormParams(fbb, op.groups, op.epsilon, nn.affine_per_group, &act).Union()};
      return true;
    case fb::OpFamily::Lrn:
      *out = {
          fb::StepParams::LrnParams,
          fb::CreateLrnParams(fbb, nn.lrn_size, nn.lrn_alpha, nn.lrn_beta, nn.lrn_bias).Union()};
      return true;
    case fb::OpFamily::Nms:
      *out = {fb::StepParams::NmsParams,
              fb::CreateNmsParams(fbb, nn.max_output_per_class, nn.iou_threshold,
                                  nn.score_threshold, nn.has_score_threshold, nn.center_point_box)
                  .Union()};
      return true;
    default:
      return false;
  }
}

}  // namespace jetplan::converter
