// The prepared steps of a loaded plan, for tools built with this repository: the converter's
// kernel selection (converter/src/select/gpu_select.cc) loads the GPU plan it is building with
// jp_plan_load_buffer(..., JP_LOAD_NO_DEVICE, ...) and reads here, for every step, the kernel
// parameters the runtime's own prepare resolved, so selection sees exactly the structs the
// kernels will be launched with.
//
// NOT part of the C API (jetplan.h): C++, no ABI promise, and it speaks the types of the
// repository's kernels/ folder (kernels/cuda/select.h defines StepDesc; include it to use this).
//
// Ownership: `out->params` points into `plan` (the step's prepared kernels::<Family>Params,
// the member of the family named by out->family); it stays valid until jp_plan_destroy(plan)
// and must not be written. Nothing is allocated; the caller owns `out`.
#ifndef JETPLAN_PLAN_STEPS_H_
#define JETPLAN_PLAN_STEPS_H_

#include <stdint.h>

#include "jetplan/jetplan.h"

// A load flag for the converter (or-ed with JP_LOAD_NO_DEVICE; jp_plan_load_buffer refuses it
// alone): the steps of the CUDA plan being built may name no kernel yet. Its kernel selection
// loads the plan so to read the prepared params; every other check of JP_LOAD_NO_DEVICE runs.
#define JP_LOAD_KERNELS_PENDING 4u

namespace jetplan::kernels::cuda {
struct StepDesc;
}  // namespace jetplan::kernels::cuda

namespace jetplan {

// Describes step `index` (0 <= index < jp_plan_num_steps(plan)): out->family (the fb::OpFamily
// value), out->params, out->num_inputs and out->num_outputs (clamped to kMaxStepInputs and
// kMaxStepOutputs) with the dtypes of those inputs and outputs. out->dtype is left as it is:
// which tensor a kernel variant is chosen by is the caller's rule. A step that writes only
// empty tensors was not prepared (it never runs): its params are zero.
// JP_ERROR_INVALID_ARGUMENT (detail in jp_last_error()) for a null plan or out, or an index out
// of range. Never throws.
JP_NODISCARD JP_API jp_status describe_step(const jp_plan* plan, int32_t index,
                                            kernels::cuda::StepDesc* out);

// Whether step `index` writes only empty tensors: it never runs, and a CUDA plan's step of that
// kind needs no kernel. False for a null plan or an index out of range.
JP_API bool step_is_skipped(const jp_plan* plan, int32_t index);

}  // namespace jetplan

#endif  // JETPLAN_PLAN_STEPS_H_
