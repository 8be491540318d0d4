// Params tables of the nn op families.
#include "converter/src/serialize_groups.h"

namespace jetplan::converter {

bool serialize_nn(flatbuffers::FlatBufferBuilder&, const DraftStep&, StepParamsOffset*) {
  return false;
}

}  // namespace jetplan::converter
