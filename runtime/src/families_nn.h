// Prepare and CPU run functions of the nn families (rows in families_nn.inc).
#pragma once

#include "runtime/src/plan.h"

namespace jetplan::rt {

}  // namespace jetplan::rt
