// Params tables of the seq op families (schemas/plan.fbs RnnParams, QuantizeParams,
// QLinearMatMulParams, QLinearConvParams, DynamicQuantizeParams) from OpDesc::seq and the conv
// fields.
#include "converter/src/serialize_groups.h"

namespace jetplan::converter {

bool serialize_seq(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step,
                   StepParamsOffset* out) {
  const OpDesc& op = step.op;
  const SeqDesc& d = op.seq;
  switch (op.family) {
    case fb::OpFamily::Rnn: {
      const auto activations = fbb.CreateVectorOfStructs(d.activations);
      const auto p = fb::CreateRnnParams(
          fbb, d.cell, d.direction, d.batch_major, d.hidden_size, activations, d.clip, d.has_clip,
          d.input_forget, d.linear_before_reset, d.has_bias, d.has_sequence_lens, d.has_initial_h,
          d.has_initial_c, d.has_peepholes, d.has_y, d.has_y_h, d.has_y_c);
      *out = {fb::StepParams::RnnParams, p.Union()};
      return true;
    }
    case fb::OpFamily::Quantize:
    case fb::OpFamily::Dequantize: {
      const auto p = fb::CreateQuantizeParams(fbb, d.axis, d.per_axis, d.has_zero_point);
      *out = {fb::StepParams::QuantizeParams, p.Union()};
      return true;
    }
    case fb::OpFamily::QLinearMatMul:
      *out = {fb::StepParams::QLinearMatMulParams, fb::CreateQLinearMatMulParams(fbb).Union()};
      return true;
    case fb::OpFamily::QLinearConv: {
      const auto p = fb::CreateQLinearConvParams(
          fbb, op.groups, fbb.CreateVector(op.kernel), fbb.CreateVector(op.stride),
          fbb.CreateVector(op.dilation), fbb.CreateVector(op.pad_begin),
          fbb.CreateVector(op.pad_end), d.has_bias);
      *out = {fb::StepParams::QLinearConvParams, p.Union()};
      return true;
    }
    case fb::OpFamily::DynamicQuantize:
      *out = {fb::StepParams::DynamicQuantizeParams, fb::CreateDynamicQuantizeParams(fbb).Union()};
      return true;
    default:
      return false;
  }
}

}  // namespace jetplan::converter
