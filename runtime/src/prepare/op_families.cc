#include "runtime/src/prepare/op_families.h"

namespace jetplan::rt {
namespace {

// Each family's PrepareFn: the step's params table, typed, to prepare_<file>.
#define JP_OP_FAMILY(Name, file, Params, Backends)                                     \
  Status prepare_##file##_step(const jp_plan& plan, const fb::Step& step, PreparedStep* s) { \
    return prepare_##file(plan, *step.params_as_##Params(), s);                        \
  }
#include "kernels/op_families.def"
#undef JP_OP_FAMILY

constexpr OpFamilyEntry kOpFamilies[] = {
#define JP_OP_FAMILY(Name, file, Params, Backends)                                           \
  {fb::OpFamily::Name, fb::StepParams::Params, #Name, prepare_##file##_step, run_##file##_cpu},
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};

constexpr size_t kFamilyCount = sizeof(kOpFamilies) / sizeof(kOpFamilies[0]);
static_assert(kFamilyCount == static_cast<size_t>(fb::OpFamily::MAX) + 1,
              "every OpFamily in schemas/plan.fbs needs a row in kernels/op_families.def");

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < kFamilyCount; ++i) {
    if (static_cast<size_t>(kOpFamilies[i].op) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "kernels/op_families.def rows must follow the OpFamily enum order");

}  // namespace

const OpFamilyEntry* find_op_family(fb::OpFamily op) {
  const auto index = static_cast<size_t>(op);
  return index < kFamilyCount ? &kOpFamilies[index] : nullptr;
}

}  // namespace jetplan::rt
