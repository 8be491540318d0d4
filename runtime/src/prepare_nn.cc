// Load-time preparation of the nn families (see families_nn.inc).
#include "runtime/src/op_families.h"

namespace jetplan::rt {}  // namespace jetplan::rt
