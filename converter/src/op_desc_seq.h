// Attributes of the seq op families (see op_desc_groups.h).
#pragma once

namespace jetplan::converter {

struct SeqDesc {};

}  // namespace jetplan::converter
