// Params tables of the ONNX-coverage families (serialize_group_<g>.cc). Each returns false when
// the family is not its group's.
#pragma once

#include <utility>

#include "converter/src/lower/lower.h"

namespace jetplan::converter {

using StepParamsOffset = std::pair<fb::StepParams, flatbuffers::Offset<void>>;

bool serialize_nn(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step,
                  StepParamsOffset* out);
bool serialize_tensor(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step,
                      StepParamsOffset* out);
bool serialize_seq(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step,
                   StepParamsOffset* out);

}  // namespace jetplan::converter
