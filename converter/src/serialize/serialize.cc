#include "converter/src/serialize/serialize.h"

#include <jetplan/jetplan.h>

#include "converter/src/ir/error.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

fb::DType plan_dtype(DataType dtype) {
  fb::DType out;
  if (!to_plan_dtype(dtype, &out)) fail("internal error: ", dtype_name(dtype), " tensor in a plan");
  return out;
}

}  // namespace

std::vector<uint8_t> serialize_plan(const PlanDraft& draft, const TargetDesc& target,
                                    const PlanMetadata& metadata) {
  FlatBufferBuilder fbb(1 << 16);

  std::vector<Offset<fb::Tensor>> tensors;
  for (const DraftTensor& t : draft.tensors) {
    tensors.push_back(fb::CreateTensor(fbb, fbb.CreateString(t.name), fbb.CreateVector(t.shape),
                                       plan_dtype(t.dtype), t.layout, t.storage, t.offset,
                                       t.size_bytes, t.binding, /*quant=*/0, t.alias_of));
  }
  std::vector<Offset<fb::Step>> steps;
  for (const DraftStep& s : draft.steps) {
    const auto [type, params] = ops::serialize_step(fbb, s);
    steps.push_back(fb::CreateStep(fbb, fbb.CreateString(s.name), s.op.family, type, params,
                                   fbb.CreateVector(s.inputs), fbb.CreateVector(s.outputs),
                                   fbb.CreateString(s.kernel), &s.launch, s.workspace_offset,
                                   s.op.workspace_bytes));
  }
  auto bindings = [&](const std::vector<DraftBinding>& list) {
    std::vector<Offset<fb::BindingDesc>> out;
    for (const DraftBinding& b : list)
      out.push_back(
          fb::CreateBindingDesc(fbb, fbb.CreateString(b.name), b.tensor, b.count_tensor));
    return fbb.CreateVector(out);
  };
  const auto inputs = bindings(draft.inputs);
  const auto outputs = bindings(draft.outputs);

  // The weight blob's first byte lands on a multiple of 256 from the buffer start (the buffer
  // size becomes a multiple of 256 too). ForceVectorAlignment skips empty vectors, so an empty
  // blob is aligned by hand: nothing is pushed after the padding but its length field.
  if (draft.weights.empty())
    fbb.Align(kWeightAlignment);
  else
    fbb.ForceVectorAlignment(draft.weights.size(), sizeof(uint8_t), kWeightAlignment);
  const auto weights = fbb.CreateVector(draft.weights);

  std::vector<Offset<fb::KeyValue>> options;
  for (const auto& [key, value] : metadata.options)  // std::map: sorted by key
    options.push_back(fb::CreateKeyValue(fbb, fbb.CreateString(key), fbb.CreateString(value)));
  const auto meta = fb::CreateMetadata(
      fbb, fbb.CreateString(metadata.converter_version), fbb.CreateString(metadata.source_sha256),
      fbb.CreateVector(options), fbb.CreateString(metadata.source_name));
  const auto plan_target =
      fb::CreateTarget(fbb, fbb.CreateString(target.name), target.backend, target.sm_arch);
  const auto plan =
      fb::CreatePlan(fbb, JP_SCHEMA_VERSION, plan_target, inputs, outputs,
                     fbb.CreateVector(tensors), fbb.CreateVector(steps), draft.arena_bytes,
                     static_cast<uint32_t>(kArenaAlignment), weights, meta);
  fb::FinishPlanBuffer(fbb, plan);
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace jetplan::converter
