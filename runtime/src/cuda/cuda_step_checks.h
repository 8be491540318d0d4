// The checks of a CUDA plan's steps that need no device (backend_cuda.h's check_cuda_steps and
// the first half of binding a step): the kernel each step names exists in this libjetplan, is of
// the step's family, takes its input and output counts and dtypes, and its launch fits the CUDA
// limits and the kernel.
#pragma once

#include <cstddef>

#include "kernels/cuda/variants.h"
#include "runtime/src/load/plan.h"

namespace jetplan::rt {

// Step `index` of `plan` against the kernel it names; *variant: that kernel.
[[nodiscard]] Status check_step_kernel(const jp_plan& plan, size_t index,
                                       const kernels::cuda::KernelVariant** variant);

}  // namespace jetplan::rt
