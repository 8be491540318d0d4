// The Pointwise family: no ONNX op resolves to it; fuse_pointwise (passes/) makes its programs.
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

StepParamsOffset serialize_pointwise(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  return params(fb::CreatePointwiseParams(fbb, fbb.CreateVectorOfStructs(s.op.pointwise)));
}

}  // namespace

const FamilyRules pointwise_rules = {serialize_pointwise, nullptr, OpRows{},
                                     fb::PointwiseInstrKind::Load, NhwcRule::kPointwise};

}  // namespace jetplan::converter::ops
