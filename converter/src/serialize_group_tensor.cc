// Params tables of the tensor op families (schemas/plan.fbs, "tensor ops").
#include "converter/src/ir/error.h"
#include "converter/src/serialize_groups.h"

namespace jetplan::converter {

bool serialize_tensor(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step,
                      StepParamsOffset* out) {
  const TensorOpDesc& t = step.op.tensor;
  using fb::StepParams;
  switch (step.op.family) {
    case fb::OpFamily::Transpose:
      *out = {StepParams::TransposeParams,
              fb::CreateTransposeParams(fbb, fbb.CreateVector(t.perm)).Union()};
      break;
    case fb::OpFamily::Slice:
      *out = {StepParams::SliceParams,
              fb::CreateSliceParams(fbb, fbb.CreateVector(t.starts), fbb.CreateVector(t.steps))
                  .Union()};
      break;
    case fb::OpFamily::Gather:
      *out = {StepParams::GatherParams, fb::CreateGatherParams(fbb, t.axis).Union()};
      break;
    case fb::OpFamily::GatherElements:
      *out = {StepParams::GatherElementsParams,
              fb::CreateGatherElementsParams(fbb, t.axis).Union()};
      break;
    case fb::OpFamily::Pad:
      *out = {StepParams::PadParams,
              fb::CreatePadParams(fbb, t.pad_mode, fbb.CreateVector(t.pads_begin), t.pad_value)
                  .Union()};
      break;
    case fb::OpFamily::Broadcast:
      *out = {StepParams::BroadcastParams, fb::CreateBroadcastParams(fbb, t.tile).Union()};
      break;
    case fb::OpFamily::Unary:
      *out = {StepParams::UnaryParams, fb::CreateUnaryParams(fbb, t.unary).Union()};
      break;
    case fb::OpFamily::Elementwise:
      *out = {StepParams::ElementwiseParams,
              fb::CreateElementwiseParams(fbb, t.elementwise).Union()};
      break;
    case fb::OpFamily::Where:
      *out = {StepParams::WhereParams, fb::CreateWhereParams(fbb).Union()};
      break;
    case fb::OpFamily::Cast:
      *out = {StepParams::CastParams, fb::CreateCastParams(fbb).Union()};
      break;
    default:
      return false;
  }
  // expand_tensor (legalize) turns every multi-step node into its steps before lowering.
  if (t.expand != TensorExpand::kNone)
    fail("internal error: step '", step.name, "' was not expanded into its steps");
  return true;
}

}  // namespace jetplan::converter
