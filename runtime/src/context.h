// An execution context: one plan bound to an arena and to input/output buffers. All memory is
// set up at creation; run only walks the prepared steps.
#pragma once

#include "runtime/src/plan.h"

struct jp_context {
  const jp_plan* plan = nullptr;  // borrowed: must outlive the context
  uint8_t* arena = nullptr;       // owned when owns_arena, else the caller's
  bool owns_arena = false;
  uint8_t* bindings = nullptr;    // owned: every input and output buffer, back to back
  jetplan::rt::Array<void*> tensors;         // one resolved pointer per plan tensor
  jetplan::rt::Array<uint8_t*> input_data;   // per input
  jetplan::rt::Array<uint8_t*> output_data;  // per output

  ~jp_context() {
    if (owns_arena) jetplan::rt::deallocate(arena);
    jetplan::rt::deallocate(bindings);
  }
};

namespace jetplan::rt {

[[nodiscard]] Status create_context(const jp_plan& plan, const jp_context_options* options,
                                    jp_context* ctx);
[[nodiscard]] Status run_context(jp_context* ctx);

}  // namespace jetplan::rt
