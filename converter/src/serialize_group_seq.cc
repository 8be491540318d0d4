// Params tables of the seq op families.
#include "converter/src/serialize_groups.h"

namespace jetplan::converter {

bool serialize_seq(flatbuffers::FlatBufferBuilder&, const DraftStep&, StepParamsOffset*) {
  return false;
}

}  // namespace jetplan::converter
