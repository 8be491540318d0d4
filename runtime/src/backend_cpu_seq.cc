// CPU run functions of the seq families.
#include "runtime/src/op_families.h"

namespace jetplan::rt {}  // namespace jetplan::rt
