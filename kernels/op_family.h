// The op families as the kernels know them: kernels/op_families.def, in fb::OpFamily order, as
// an enum (kernels include no flatbuffers header; the runtime static_asserts kOpFamilyCount
// against fb::OpFamily). Tables indexed by family are built from the same list.
#pragma once

#include <cstdint>

namespace jetplan::kernels {

enum class OpFamilyId : uint16_t {
#define JP_OP_FAMILY(Name, file, Params, Backends) k##Name,
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};

constexpr int kOpFamilyCount = 0
#define JP_OP_FAMILY(Name, file, Params, Backends) +1
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
    ;

}  // namespace jetplan::kernels
