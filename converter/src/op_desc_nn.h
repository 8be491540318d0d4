// Attributes of the nn op families (see op_desc_groups.h).
#pragma once

namespace jetplan::converter {

struct NnDesc {};

}  // namespace jetplan::converter
