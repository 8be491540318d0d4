// The registry of op families: one row per fb::OpFamily value, in enum order, made from
// kernels/op_families.def (checked at compile time in op_families.cc). A row says which params
// table the step must carry, how load turns it into kernel parameters (checking every shape
// against the tensors, since a plan is untrusted) and which CPU kernel runs it.
//
// Each family's functions are prepare_<file> and run_<file>_cpu in prepare/<file>.cc, declared
// here from the same list: a family added to the .def needs its prepare/<file>.cc and nothing
// else in the runtime.
#pragma once

#include "runtime/src/load/plan.h"

namespace jetplan::rt {

// Checks `step` (load verified its index lists, its workspace range, and that it carries the
// family's params table) against its tensors and fills s->params; may replace s->run_cpu by a
// variant of the family's.
using PrepareFn = Status (*)(const jp_plan& plan, const fb::Step& step, PreparedStep* s);

struct OpFamilyEntry {
  fb::OpFamily op;
  fb::StepParams params_type;
  const char* name;
  PrepareFn prepare;
  RunCpuFn run_cpu;
};

// Null when `op` is not a value this runtime knows.
const OpFamilyEntry* find_op_family(fb::OpFamily op);

// prepare_<file> takes the step's params table (load checked it is there and of the family's
// type); run_<file>_cpu is the family's RunCpuFn.
#define JP_OP_FAMILY(Name, file, Params, Backends)                                       \
  [[nodiscard]] Status prepare_##file(const jp_plan& plan, const fb::Params& p,          \
                                      PreparedStep* s);                                  \
  void run_##file##_cpu(const PreparedStep& s, void* const* tensors, void* workspace);
#include "kernels/op_families.def"
#undef JP_OP_FAMILY

}  // namespace jetplan::rt
