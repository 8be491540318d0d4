// Prepare and CPU run functions of the tensor families (rows in families_tensor.inc).
#pragma once

#include "runtime/src/plan.h"

namespace jetplan::rt {

}  // namespace jetplan::rt
