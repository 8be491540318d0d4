#include "runtime/src/cpu/run_steps.h"

namespace jetplan::rt {

void run_cpu_steps(const jp_plan& plan, void* const* tensors, uint8_t* arena) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PreparedStep& step = plan.steps[i];
    step.run_cpu(step, tensors, step.workspace_bytes != 0 ? arena + step.workspace_offset : nullptr);
  }
}

void run_nothing_cpu(const PreparedStep&, void* const*, void*) {}

}  // namespace jetplan::rt
