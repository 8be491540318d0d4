// Prepare and CPU run functions of the seq families (rows in families_seq.inc).
#pragma once

#include "runtime/src/plan.h"

namespace jetplan::rt {

}  // namespace jetplan::rt
