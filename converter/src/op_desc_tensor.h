// Attributes of the tensor op families (see op_desc_groups.h).
#pragma once

namespace jetplan::converter {

struct TensorOpDesc {};

}  // namespace jetplan::converter
