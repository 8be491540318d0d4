#include "runtime/src/cpu/run_steps.h"

namespace jetplan::rt {

namespace {

// The outputs of one step, as the observer sees them: dims straight from the plan's tensor table
// (no copy, nothing allocated).
void observe_step(const jp_plan& plan, const PreparedStep& step, int32_t index,
                  void* const* tensors, const StepObserver& observer) {
  for (uint32_t t : *step.outputs) {
    const TensorInfo& info = plan.tensors[t];
    observer.fn(observer.user, index, info.name, static_cast<jp_dtype>(info.dtype), info.dims,
                info.rank, tensors[t]);
  }
}

}  // namespace

void run_cpu_steps(const jp_plan& plan, void* const* tensors, uint8_t* arena,
                   const StepObserver& observer) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PreparedStep& step = plan.steps[i];
    step.run_cpu(step, tensors, step.workspace_bytes != 0 ? arena + step.workspace_offset : nullptr);
    if (observer.fn != nullptr) observe_step(plan, step, static_cast<int32_t>(i), tensors, observer);
  }
}

void run_nothing_cpu(const PreparedStep&, void* const*, void*) {}

}  // namespace jetplan::rt
