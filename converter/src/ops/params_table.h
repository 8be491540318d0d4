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

}  // namespace jetplan::converter::ops
