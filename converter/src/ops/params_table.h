// What the families' serializers (registry.h, SerializeFn) share: the step they write from and
// the small conversions into schema types.
#pragma once

#include <cstdint>
#include <vector>

#include "converter/src/lower/lower.h"
#include "converter/src/ops/registry.h"

namespace jetplan::converter::ops {

inline flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints(flatbuffers::FlatBufferBuilder& fbb,
                                                              const std::vector<int64_t>& v) {
  return fbb.CreateVector(v);
}

inline fb::Activation activation(const ActivationDesc& a) { return {a.kind, a.alpha, a.beta}; }

// Conv's bias, Gemm's C: whether the step reads a third operand (its inputs are two operands,
// then that one and the residual when present).
inline bool has_third_operand(const DraftStep& s) {
  return s.inputs.size() - (s.op.has_residual ? 1 : 0) == 3;
}

// A written params table with the StepParams tag of its type (the schema's union traits), so a
// serializer names its table once.
template <typename Table>
StepParamsOffset params(flatbuffers::Offset<Table> table) {
  // Copied first: flatc declares enum_value `static const` without a definition, and the pair's
  // constructor takes it by reference (an odr-use that links only where the optimizer folds it).
  const fb::StepParams tag = fb::StepParamsTraits<Table>::enum_value;
  return {tag, table.Union()};
}

// The serializer of a family whose params table has no fields.
template <typename Table>
StepParamsOffset serialize_empty(flatbuffers::FlatBufferBuilder& fbb, const DraftStep&) {
  typename Table::Builder builder(fbb);
  return params(builder.Finish());
}

}  // namespace jetplan::converter::ops
