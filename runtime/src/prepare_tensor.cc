// Load-time preparation of the tensor families (see families_tensor.inc).
#include "runtime/src/op_families.h"

namespace jetplan::rt {}  // namespace jetplan::rt
