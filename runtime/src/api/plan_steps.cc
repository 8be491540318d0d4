// jetplan/plan_steps.h: a loaded plan's prepared steps, read by tools (the converter's kernel
// selection) through a declared interface instead of the runtime's private headers.
#include "jetplan/plan_steps.h"

#include "kernels/cuda/select.h"
#include "runtime/src/load/plan.h"

namespace jetplan {

jp_status describe_step(const jp_plan* plan, int32_t index, kernels::cuda::StepDesc* out) {
  if (plan == nullptr || out == nullptr) {
    return rt::fail(JP_ERROR_INVALID_ARGUMENT, "describe_step: null plan or output");
  }
  if (index < 0 || static_cast<size_t>(index) >= plan->steps.size()) {
    return rt::fail(JP_ERROR_INVALID_ARGUMENT, "step index %d is out of range (the plan has %zu)",
                    index, plan->steps.size());
  }
  const rt::PreparedStep& step = plan->steps[static_cast<size_t>(index)];
  out->family = static_cast<uint16_t>(step.op);
  out->params = &step.params;
  out->num_inputs = step.inputs->size() < static_cast<uint32_t>(kernels::cuda::kMaxStepInputs)
                        ? static_cast<int>(step.inputs->size())
                        : kernels::cuda::kMaxStepInputs;
  out->num_outputs = step.outputs->size() < static_cast<uint32_t>(kernels::cuda::kMaxStepOutputs)
                         ? static_cast<int>(step.outputs->size())
                         : kernels::cuda::kMaxStepOutputs;
  // kernels::DType numbers its values as fb::DType (static_assert'ed in prepare_util.cc).
  for (int i = 0; i < out->num_inputs; ++i) {
    out->input_dtypes[i] = static_cast<kernels::DType>(
        plan->tensors[step.inputs->Get(static_cast<uint32_t>(i))].dtype);
  }
  for (int i = 0; i < out->num_outputs; ++i) {
    out->output_dtypes[i] = static_cast<kernels::DType>(
        plan->tensors[step.outputs->Get(static_cast<uint32_t>(i))].dtype);
  }
  return JP_OK;
}

bool step_is_skipped(const jp_plan* plan, int32_t index) {
  return plan != nullptr && index >= 0 && static_cast<size_t>(index) < plan->steps.size() &&
         plan->steps[static_cast<size_t>(index)].skipped;
}

}  // namespace jetplan
