// Params tables of the tensor op families.
#include "converter/src/serialize_groups.h"

namespace jetplan::converter {

bool serialize_tensor(flatbuffers::FlatBufferBuilder&, const DraftStep&, StepParamsOffset*) {
  return false;
}

}  // namespace jetplan::converter
