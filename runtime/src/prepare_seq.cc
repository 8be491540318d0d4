// Load-time preparation of the seq families (see families_seq.inc).
#include "runtime/src/op_families.h"

namespace jetplan::rt {}  // namespace jetplan::rt
