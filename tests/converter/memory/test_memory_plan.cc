#include "converter/src/memory/memory_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace jetplan::converter {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// The lower bound computed the slow way: walk every step, sum what is live there.
uint64_t brute_lower_bound(const std::vector<BufferRequest>& reqs, uint64_t alignment) {
  if (reqs.empty()) return 0;
  int32_t lo = reqs[0].first_step, hi = reqs[0].last_step;
  for (const auto& r : reqs) {
    lo = std::min({lo, r.first_step, r.last_step});
    hi = std::max({hi, r.first_step, r.last_step});
  }
  uint64_t best = 0;
  for (int32_t s = lo; s <= hi; ++s) {
    uint64_t sum = 0;
    for (const auto& r : reqs) {
      if (r.bytes != 0 && std::min(r.first_step, r.last_step) <= s &&
          s <= std::max(r.first_step, r.last_step)) {
        sum += round_up(r.bytes, alignment);
      }
    }
    best = std::max(best, sum);
  }
  return best;
}

// Independent of arena_plan_is_valid, so a bug there cannot hide a bug in the planner.
void expect_sound(const std::vector<BufferRequest>& reqs, const ArenaPlan& plan,
                  uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), reqs.size());
  EXPECT_EQ(plan.arena_bytes % alignment, 0u);
  uint64_t top = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u) << "buffer " << i;
    if (reqs[i].bytes == 0) {
      EXPECT_EQ(plan.offsets[i], 0u) << "zero-byte buffer " << i;
      continue;
    }
    EXPECT_LE(plan.offsets[i] + reqs[i].bytes, plan.arena_bytes) << "buffer " << i;
    top = std::max(top, plan.offsets[i] + round_up(reqs[i].bytes, alignment));
    for (size_t j = 0; j < i; ++j) {
      if (reqs[j].bytes == 0) continue;
      const bool same_time =
          reqs[i].first_step <= reqs[j].last_step && reqs[j].first_step <= reqs[i].last_step;
      const bool same_bytes = plan.offsets[i] < plan.offsets[j] + reqs[j].bytes &&
                              plan.offsets[j] < plan.offsets[i] + reqs[i].bytes;
      EXPECT_FALSE(same_time && same_bytes) << "buffers " << j << " and " << i << " overlap";
    }
  }
  EXPECT_EQ(plan.arena_bytes, top);
  EXPECT_GE(plan.arena_bytes, plan.lower_bound);
  EXPECT_EQ(plan.lower_bound, brute_lower_bound(reqs, alignment));
}

// plan_arena's plan of reqs, checked by expect_sound.
ArenaPlan sound_plan(const std::vector<BufferRequest>& reqs, uint64_t alignment) {
  const ArenaPlan plan = plan_arena(reqs, alignment);
  expect_sound(reqs, plan, alignment);
  return plan;
}

TEST(MemoryPlan, EmptyInput) {
  const ArenaPlan plan = plan_arena({}, 64);
  EXPECT_TRUE(plan.offsets.empty());
  EXPECT_EQ(plan.arena_bytes, 0u);
  EXPECT_EQ(plan.lower_bound, 0u);
  EXPECT_TRUE(arena_plan_is_valid({}, plan, 64));
}

TEST(MemoryPlan, ChainReusesMemory) {
  // a -> b -> c -> d: step i reads buffer i and writes buffer i+1.
  const std::vector<BufferRequest> reqs = {
      {1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  const ArenaPlan plan = sound_plan(reqs, 256);
  EXPECT_TRUE(arena_plan_is_valid(reqs, plan, 256));
  EXPECT_EQ(plan.lower_bound, 2048u);
  EXPECT_EQ(plan.arena_bytes, 2048u);  // ping-pong between two slots
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.offsets[1], plan.offsets[3]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(MemoryPlan, AllLiveAtOnceTakesTheSum) {
  const std::vector<BufferRequest> reqs = {{100, 0, 5}, {300, 0, 5}, {200, 0, 5}, {64, 0, 5}};
  const ArenaPlan plan = sound_plan(reqs, 64);
  EXPECT_EQ(plan.lower_bound, 128u + 320u + 256u + 64u);
  EXPECT_EQ(plan.arena_bytes, plan.lower_bound);
  // Largest first: 300 at 0, then 200, then 100, then 64.
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{576, 0, 320, 704}));
}

TEST(MemoryPlan, AlignmentRespected) {
  const std::vector<BufferRequest> reqs = {{1, 0, 2}, {3, 1, 2}, {257, 0, 0}, {5, 2, 3}};
  for (uint64_t alignment : {1u, 2u, 16u, 256u, 4096u}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    const ArenaPlan plan = sound_plan(reqs, alignment);
    EXPECT_TRUE(arena_plan_is_valid(reqs, plan, alignment));
  }
  const ArenaPlan plan = plan_arena(reqs, 256);
  EXPECT_EQ(plan.lower_bound, 512u + 256u);  // step 0: 257 -> 512, plus 1 -> 256
}

TEST(MemoryPlan, ZeroByteRequests) {
  const std::vector<BufferRequest> reqs = {{0, 0, 9}, {64, 0, 1}, {0, 3, 4}, {64, 1, 2}};
  const ArenaPlan plan = sound_plan(reqs, 64);
  EXPECT_EQ(plan.offsets[0], 0u);
  EXPECT_EQ(plan.offsets[2], 0u);
  EXPECT_EQ(plan.lower_bound, 128u);
  EXPECT_EQ(plan.arena_bytes, 128u);
  EXPECT_TRUE(arena_plan_is_valid(reqs, plan, 64));

  const std::vector<BufferRequest> only_empty = {{0, 0, 1}, {0, 1, 2}};
  const ArenaPlan empty = plan_arena(only_empty, 64);
  EXPECT_EQ(empty.arena_bytes, 0u);
  EXPECT_EQ(empty.lower_bound, 0u);
  EXPECT_TRUE(arena_plan_is_valid(only_empty, empty, 64));
}

TEST(MemoryPlan, GapBelowAPlacedBufferIsReused) {
  // A (steps 0-1) takes offset 0; B (1-2) meets A, so it goes above; C (2-3) meets only B, so it
  // drops into the space below B that A has left.
  const std::vector<BufferRequest> reqs = {{512, 0, 1}, {512, 1, 2}, {256, 2, 3}};
  const ArenaPlan plan = sound_plan(reqs, 256);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{0, 512, 0}));
  EXPECT_EQ(plan.arena_bytes, 1024u);
}

TEST(MemoryPlan, EqualSizesPlacedByStartThenIndex) {
  const std::vector<BufferRequest> reqs = {{256, 3, 4}, {256, 0, 4}, {256, 0, 4}};
  const ArenaPlan plan = sound_plan(reqs, 256);
  EXPECT_EQ(plan.offsets, (std::vector<uint64_t>{512, 0, 256}));
}

TEST(MemoryPlan, HugeSizesDoNotWrap) {
  // One buffer of 2^63 fits; two of them live together do not fit in 64 bits.
  const uint64_t half = uint64_t{1} << 63;
  const std::vector<BufferRequest> one = {{half, 0, 1}};
  const ArenaPlan ok = plan_arena(one, 256);
  EXPECT_EQ(ok.arena_bytes, half);
  EXPECT_TRUE(arena_plan_is_valid(one, ok, 256));

  const std::vector<BufferRequest> two = {{half, 0, 1}, {half, 1, 2}, {kMax - 3, 1, 1}};
  const ArenaPlan too_big = plan_arena(two, 256);
  EXPECT_FALSE(arena_plan_is_valid(two, too_big, 256));
  EXPECT_EQ(too_big.lower_bound, kMax);

  // Same sizes at different times: reuse keeps it representable.
  const std::vector<BufferRequest> apart = {{half, 0, 1}, {half, 2, 3}};
  const ArenaPlan fits = plan_arena(apart, 256);
  EXPECT_TRUE(arena_plan_is_valid(apart, fits, 256));
  EXPECT_EQ(fits.arena_bytes, half);
}

TEST(MemoryPlan, CheckerRejectsBrokenPlans) {
  const std::vector<BufferRequest> reqs = {{100, 0, 2}, {200, 1, 3}, {300, 4, 5}};
  const ArenaPlan good = plan_arena(reqs, 64);
  ASSERT_TRUE(arena_plan_is_valid(reqs, good, 64));

  ArenaPlan overlap = good;  // 0 and 1 are live together at steps 1-2
  overlap.offsets[0] = overlap.offsets[1];
  EXPECT_FALSE(arena_plan_is_valid(reqs, overlap, 64));

  ArenaPlan partial = good;  // overlap by one byte only
  partial.offsets[0] = 0;
  partial.offsets[1] = 64;
  partial.arena_bytes = 1024;
  EXPECT_FALSE(arena_plan_is_valid(reqs, partial, 64));
  partial.offsets[1] = 128;  // 100 bytes end at 100 < 128: fine
  EXPECT_TRUE(arena_plan_is_valid(reqs, partial, 64));

  ArenaPlan misaligned = good;
  misaligned.offsets[2] += 8;
  misaligned.arena_bytes += 64;
  EXPECT_FALSE(arena_plan_is_valid(reqs, misaligned, 64));

  ArenaPlan small = good;  // one byte short of the highest buffer's end
  small.arena_bytes = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    small.arena_bytes = std::max(small.arena_bytes, good.offsets[i] + reqs[i].bytes - 1);
  }
  EXPECT_FALSE(arena_plan_is_valid(reqs, small, 64));

  ArenaPlan wrap = good;  // offset + bytes wraps past 2^64
  wrap.offsets[2] = kMax - 63;
  wrap.arena_bytes = kMax;
  EXPECT_FALSE(arena_plan_is_valid(reqs, wrap, 64));

  ArenaPlan short_offsets = good;
  short_offsets.offsets.pop_back();
  EXPECT_FALSE(arena_plan_is_valid(reqs, short_offsets, 64));

  EXPECT_FALSE(arena_plan_is_valid(reqs, good, 48));  // not a power of two

  // Buffers that never meet may share bytes.
  ArenaPlan shared = good;
  shared.offsets[2] = shared.offsets[0];
  shared.arena_bytes = 4096;
  EXPECT_TRUE(arena_plan_is_valid(reqs, shared, 64));
}

// Random graphs: step s runs node s, which writes one tensor read by a few later nodes; the
// tensor lives from its producer to its last consumer (or to the end, as a graph output).
std::vector<BufferRequest> random_graph(std::mt19937_64& rng) {
  const int steps = 1 + static_cast<int>(rng() % 40);
  std::vector<BufferRequest> reqs(steps);
  for (int s = 0; s < steps; ++s) {
    const uint64_t kind = rng() % 10;
    reqs[s].bytes = kind == 0 ? 0 : kind < 3 ? 1 + rng() % 64 : 1 + rng() % 100000;
    reqs[s].first_step = s;
    reqs[s].last_step = s;
    const int readers = static_cast<int>(rng() % 4);
    for (int k = 0; k < readers && s + 1 < steps; ++k) {
      const int reader = s + 1 + static_cast<int>(rng() % std::min(steps - s - 1, 6));
      reqs[s].last_step = std::max(reqs[s].last_step, reader);
    }
    if (rng() % 8 == 0) reqs[s].last_step = steps - 1;
  }
  // Workspaces: live during one step only.
  const int workspaces = static_cast<int>(rng() % 5);
  for (int k = 0; k < workspaces; ++k) {
    const int32_t s = static_cast<int32_t>(rng() % steps);
    reqs.push_back({1 + rng() % 50000, s, s});
  }
  return reqs;
}

// Arbitrary intervals, including equal sizes (tie-breaking), negative steps and duplicates.
std::vector<BufferRequest> random_intervals(std::mt19937_64& rng) {
  const int n = static_cast<int>(rng() % 60);
  std::vector<BufferRequest> reqs;
  for (int i = 0; i < n; ++i) {
    const int32_t a = static_cast<int32_t>(rng() % 30) - 5;
    const int32_t len = static_cast<int32_t>(rng() % 10);
    const uint64_t bytes = rng() % 4 == 0 ? 256 * (1 + rng() % 4) : rng() % 5000;
    reqs.push_back({bytes, a, a + len});
    if (rng() % 10 == 0) reqs.push_back(reqs.back());
  }
  return reqs;
}

TEST(MemoryPlan, PropertyRandomGraphs) {
  for (uint64_t seed = 1; seed <= 1500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::vector<BufferRequest> reqs =
        seed % 2 == 0 ? random_graph(rng) : random_intervals(rng);
    const uint64_t alignment = uint64_t{1} << (rng() % 9);
    const ArenaPlan plan = sound_plan(reqs, alignment);
    EXPECT_TRUE(arena_plan_is_valid(reqs, plan, alignment));

    const ArenaPlan again = plan_arena(reqs, alignment);
    EXPECT_EQ(again.offsets, plan.offsets);
    EXPECT_EQ(again.arena_bytes, plan.arena_bytes);
    EXPECT_EQ(again.lower_bound, plan.lower_bound);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "first failing seed " << seed;
      return;
    }
  }
}

TEST(MemoryPlan, PropertyCheckerCatchesInjectedOverlap) {
  int injected = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::vector<BufferRequest> reqs = random_graph(rng);
    const ArenaPlan plan = plan_arena(reqs, 64);
    ASSERT_TRUE(arena_plan_is_valid(reqs, plan, 64));
    // Move one buffer onto another it meets in time.
    for (size_t i = 0; i < reqs.size(); ++i) {
      for (size_t j = 0; j < reqs.size(); ++j) {
        if (i == j || reqs[i].bytes == 0 || reqs[j].bytes == 0) continue;
        if (reqs[i].first_step > reqs[j].last_step || reqs[j].first_step > reqs[i].last_step) {
          continue;
        }
        ArenaPlan broken = plan;
        broken.offsets[i] = broken.offsets[j];
        broken.arena_bytes = kMax - kMax % 64;  // size is not what fails it
        EXPECT_FALSE(arena_plan_is_valid(reqs, broken, 64)) << i << " onto " << j;
        ++injected;
        i = reqs.size();
        break;
      }
    }
  }
  EXPECT_GT(injected, 100);
}

}  // namespace
}  // namespace jetplan::converter
