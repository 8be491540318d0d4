// The Attention family: no ONNX op resolves to it; fuse_attention (passes/) replaces the
// exporters' MatMul, scale, mask Add, Softmax, MatMul chains by its steps.
#include "converter/src/ops/params_table.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

namespace {

StepParamsOffset serialize_attention(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& s) {
  const AttentionDesc& a = s.op.attention;
  const auto axes = [&fbb](const std::vector<uint8_t>& v) {
    return v.empty() ? flatbuffers::Offset<flatbuffers::Vector<uint8_t>>() : fbb.CreateVector(v);
  };
  const auto q = axes(a.q_axes), k = axes(a.k_axes), v = axes(a.v_axes), o = axes(a.o_axes);
  return params(fb::CreateAttentionParams(fbb, a.scale, a.causal, a.has_mask, q, k, v, o));
}

}  // namespace

const FamilyRules attention_rules = {serialize_attention, nullptr, OpRows{}};

}  // namespace jetplan::converter::ops
