#include "converter/src/memory/memory_plan.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>

namespace jetplan::converter {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// Sizes come from tensor shapes the converter computed; a model can still ask for more than
// 64 bits hold. Arithmetic saturates at kMax instead of wrapping, so an impossible request gives
// an arena that arena_plan_is_valid rejects rather than a small arena that silently overlaps.
uint64_t add_saturating(uint64_t a, uint64_t b) { return a > kMax - b ? kMax : a + b; }

// Rounds up to a multiple of `alignment` (a power of two). Saturates to kMax, which is not a
// multiple of any alignment above 1: callers treat kMax as "does not fit".
uint64_t round_up(uint64_t value, uint64_t alignment) {
  const uint64_t mask = alignment - 1;
  if (value > kMax - mask) return kMax;
  return (value + mask) & ~mask;
}

// A reversed interval is read as the steps between its ends: treating it as empty would let the
// buffer share memory with everything, which is the unsafe reading of a caller's mistake.
int32_t live_begin(const BufferRequest& r) { return std::min(r.first_step, r.last_step); }
int32_t live_end(const BufferRequest& r) { return std::max(r.first_step, r.last_step); }

bool live_together(const BufferRequest& a, const BufferRequest& b) {
  return live_begin(a) <= live_end(b) && live_begin(b) <= live_end(a);
}

// [oa, oa + sa) and [ob, ob + sb) intersect; written without computing the ends, which may not
// fit in 64 bits for a broken plan.
bool ranges_intersect(uint64_t oa, uint64_t sa, uint64_t ob, uint64_t sb) {
  if (sa == 0 || sb == 0) return false;
  return oa <= ob ? ob - oa < sa : oa - ob < sb;
}

bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

ArenaPlan plan_arena(const std::vector<BufferRequest>& requests, uint64_t alignment) {
  ArenaPlan plan;
  const size_t n = requests.size();
  plan.offsets.assign(n, 0);
  if (!is_power_of_two(alignment)) alignment = 1;  // contract violation: plan unaligned but sound

  std::vector<uint64_t> aligned(n);
  for (size_t i = 0; i < n; ++i) aligned[i] = round_up(requests[i].bytes, alignment);

  // Greedy order: largest first, then earliest start; the index breaks the remaining ties so
  // that the order (and thus every offset) depends only on the input.
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (requests[i].bytes != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    if (live_begin(requests[a]) != live_begin(requests[b])) {
      return live_begin(requests[a]) < live_begin(requests[b]);
    }
    return a < b;
  });

  std::vector<size_t> placed;
  placed.reserve(order.size());
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // (offset, aligned end) of time-overlapping
  for (size_t idx : order) {
    busy.clear();
    for (size_t p : placed) {
      if (live_together(requests[idx], requests[p])) {
        busy.emplace_back(plan.offsets[p], add_saturating(plan.offsets[p], aligned[p]));
      }
    }
    std::sort(busy.begin(), busy.end());
    // Lowest gap that fits: walk the busy ranges by offset, moving the candidate past each one
    // it would touch. Every busy end is aligned (offsets and sizes are), so the candidate is too.
    uint64_t candidate = 0;
    const uint64_t size = aligned[idx];
    for (const auto& [begin, end] : busy) {
      if (begin >= candidate && begin - candidate >= size) break;  // fits below this range
      candidate = std::max(candidate, end);
    }
    plan.offsets[idx] = candidate;
    plan.arena_bytes = std::max(plan.arena_bytes, add_saturating(candidate, size));
    placed.push_back(idx);
  }

  // Lower bound: sweep the interval ends. At equal steps the starts come first, since both ends
  // of an interval are inclusive.
  std::vector<std::pair<int64_t, uint64_t>> starts, ends;  // (step, aligned size)
  for (size_t i = 0; i < n; ++i) {
    if (requests[i].bytes == 0) continue;
    starts.emplace_back(live_begin(requests[i]), aligned[i]);
    ends.emplace_back(static_cast<int64_t>(live_end(requests[i])) + 1, aligned[i]);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  // Sizes only grow within a step, and a step whose total does not fit in 64 bits ends the
  // sweep (the bound saturates), so `live` never wraps.
  uint64_t live = 0;
  size_t e = 0;
  for (size_t s = 0; s < starts.size(); ++s) {
    while (e < ends.size() && ends[e].first <= starts[s].first) {
      live -= ends[e].second;
      ++e;
    }
    if (live > kMax - starts[s].second) {
      plan.lower_bound = kMax;
      break;
    }
    live += starts[s].second;
    if (s + 1 == starts.size() || starts[s + 1].first != starts[s].first) {
      plan.lower_bound = std::max(plan.lower_bound, live);
    }
  }
  return plan;
}

bool arena_plan_is_valid(const std::vector<BufferRequest>& requests, const ArenaPlan& plan,
                         uint64_t alignment) {
  if (!is_power_of_two(alignment)) return false;
  if (plan.offsets.size() != requests.size()) return false;
  const size_t n = requests.size();
  for (size_t i = 0; i < n; ++i) {
    const uint64_t offset = plan.offsets[i];
    const uint64_t bytes = requests[i].bytes;
    if (offset % alignment != 0) return false;
    if (bytes == 0) continue;
    if (bytes > plan.arena_bytes || offset > plan.arena_bytes - bytes) return false;
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (!live_together(requests[i], requests[j])) continue;
      if (ranges_intersect(plan.offsets[i], requests[i].bytes, plan.offsets[j],
                           requests[j].bytes)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace jetplan::converter
