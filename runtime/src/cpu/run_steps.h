// The CPU backend's executor: walks a loaded plan's prepared steps in order, each through the
// run function its family's prepare chose (prepare/<file>.cc).
#pragma once

#include <cstdint>

#include "runtime/src/load/plan.h"

namespace jetplan::rt {

// A caller's callback after each step (jp_step_observer_fn); fn null: none. `user` is the
// caller's, passed through.
struct StepObserver {
  jp_step_observer_fn fn = nullptr;
  void* user = nullptr;
};

// tensors: one pointer per plan tensor (borrowed from the context); arena: the context's host
// arena, holding every step's workspace. Never fails: load checked everything run touches.
// observer: called after each step for each of its outputs (allocates nothing).
void run_cpu_steps(const jp_plan& plan, void* const* tensors, uint8_t* arena,
                   const StepObserver& observer = {});

// A step that writes only empty tensors: there is nothing to compute, so load neither prepares
// nor runs it (its params are never read).
void run_nothing_cpu(const PreparedStep& step, void* const* tensors, void* workspace);

}  // namespace jetplan::rt
