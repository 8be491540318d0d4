// CPU run functions of the nn families.
#include "runtime/src/op_families.h"

namespace jetplan::rt {}  // namespace jetplan::rt
