// CPU run functions of the tensor families.
#include "runtime/src/op_families.h"

namespace jetplan::rt {}  // namespace jetplan::rt
