// An execution context: one plan bound to an arena and to input/output buffers. All memory is
// set up at creation; run only walks the prepared steps.
#pragma once

#include "runtime/src/cpu/run_steps.h"
#include "runtime/src/load/plan.h"

namespace jetplan::rt {
struct CudaContext;  // backend_cuda.cc
void destroy_cuda_context(CudaContext* cuda);
}  // namespace jetplan::rt

// CPU plans: arena, bindings and tensors are host memory. CUDA plans: `cuda` owns the device
// arena, the device bindings and their pinned host staging (input_data/output_data point
// there), `tensors` holds device addresses, and `arena`/`bindings` stay null.
struct jp_context {
  const jp_plan* plan = nullptr;  // borrowed: must outlive the context
  uint8_t* arena = nullptr;       // owned when owns_arena, else the caller's
  bool owns_arena = false;
  uint8_t* bindings = nullptr;    // owned: every input and output buffer, back to back
  jetplan::rt::Array<void*> tensors;         // one resolved pointer per plan tensor
  jetplan::rt::Array<uint8_t*> input_data;   // per input
  jetplan::rt::Array<uint8_t*> output_data;  // per output

  jetplan::rt::CudaContext* cuda = nullptr;
  // Called after each step (jp_context_set_step_observer); null: none.
  jetplan::rt::StepObserver observer;

  ~jp_context() {
    if (cuda != nullptr) jetplan::rt::destroy_cuda_context(cuda);
    if (owns_arena) jetplan::rt::deallocate(arena);
    jetplan::rt::deallocate(bindings);
  }
};

namespace jetplan::rt {

[[nodiscard]] Status create_context(const jp_plan& plan, const jp_context_options* options,
                                    jp_context* ctx);
[[nodiscard]] Status run_context(jp_context* ctx);

}  // namespace jetplan::rt
