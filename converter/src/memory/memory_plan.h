// Offline arena planning: every activation tensor (and step workspace) gets a byte offset in one
// arena, so that no two buffers live at the same time overlap. Runs at conversion; the runtime
// only reads the offsets.
#pragma once

#include <cstdint>
#include <vector>

namespace jetplan::converter {

// One buffer to place: `bytes` long, live from the step that writes it first to the step that
// reads it last, both inclusive (a step's inputs and outputs are live at once, so they never
// share memory).
struct BufferRequest {
  uint64_t bytes = 0;
  int32_t first_step = 0;
  int32_t last_step = 0;
};

struct ArenaPlan {
  std::vector<uint64_t> offsets;  // one per request, each a multiple of the alignment
  uint64_t arena_bytes = 0;       // end of the highest placed buffer, rounded to the alignment
  // The largest total (aligned) size of buffers live at one step: no plan can be smaller.
  uint64_t lower_bound = 0;
};

// Greedy by size (largest first, then earliest start), each buffer placed at the lowest offset
// that does not overlap a time-overlapping buffer already placed. Deterministic: equal inputs
// give equal offsets. alignment must be a power of two.
ArenaPlan plan_arena(const std::vector<BufferRequest>& requests, uint64_t alignment);

// True when no two requests that are live at a common step overlap in [offset, offset + bytes),
// every offset is aligned and every buffer ends within arena_bytes. Used by tests and as a
// converter self-check before a plan is written.
bool arena_plan_is_valid(const std::vector<BufferRequest>& requests, const ArenaPlan& plan,
                         uint64_t alignment);

}  // namespace jetplan::converter
