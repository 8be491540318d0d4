// Contexts over a loaded plan: inputs, outputs and a caller's arena checked; separate contexts
// run at once; the log callback gets the detail; every failing allocation of load and context
// creation is reported and leaks nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tests/runtime/conv_relu_plan.h"

namespace jetplan::testing {
namespace {

struct Captured {
  std::vector<std::string> messages;
};

void capture(void* user, jp_log_level, const char* msg) {
  static_cast<Captured*>(user)->messages.push_back(msg);
}

TEST(Context, ChecksInputsOutputsAndCallerArena) {
  const auto bytes = build_plan(conv_relu_plan());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  int32_t index = -1;
  EXPECT_EQ(jp_plan_find_input(plan, "x", &index), JP_OK);
  EXPECT_EQ(index, 0);
  EXPECT_EQ(jp_plan_find_input(plan, "nope", &index), JP_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(jp_last_error()).find("'nope'"), std::string::npos);
  EXPECT_EQ(jp_plan_find_output(plan, "y", &index), JP_OK);

  alignas(256) static uint8_t arena[512];
  jp_context_options small{arena, 128, 0, nullptr};
  jp_context* ctx = nullptr;
  EXPECT_EQ(jp_context_create(plan, &small, &ctx), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  jp_context_options misaligned{arena + 16, 400, 0, nullptr};
  EXPECT_EQ(jp_context_create(plan, &misaligned, &ctx), JP_ERROR_INVALID_ARGUMENT);
  jp_context_options good{arena, sizeof(arena), 0, nullptr};
  ASSERT_EQ(jp_context_create(plan, &good, &ctx), JP_OK);

  std::vector<float> x = random_input(3);
  EXPECT_EQ(jp_context_set_input(ctx, 0, x.data(), 71), JP_ERROR_SHAPE_MISMATCH);
  EXPECT_NE(std::string(jp_last_error()).find("input 'x' takes 72 bytes, got 71"),
            std::string::npos);
  EXPECT_EQ(jp_context_set_input(ctx, 1, x.data(), 72), JP_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), 72), JP_OK);
  std::memset(arena, 0xff, sizeof(arena));  // poison: the run must overwrite what it reads
  ASSERT_EQ(jp_context_run(ctx), JP_OK);
  const void* data = nullptr;
  size_t n = 0;
  EXPECT_EQ(jp_context_get_output(ctx, 1, &data, &n), JP_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &n), JP_OK);
  std::vector<float> y(n / 4);
  std::memcpy(y.data(), data, n);
  EXPECT_TRUE(near_all(y, expected_conv_relu(x)));
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(Context, SeparateContextsRunConcurrently) {
  const auto bytes = build_plan(conv_relu_plan());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const auto x = random_input(static_cast<uint32_t>(t * 1000 + i));
        if (!near_all(run_plan(plan, x), expected_conv_relu(x))) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
  jp_plan_destroy(plan);
}

TEST(Logging, CallbackReceivesTheDetail) {
  Captured captured;
  jp_set_log_callback(capture, &captured);
  jp_plan* plan = nullptr;
  EXPECT_EQ(jp_plan_load_file("/nonexistent.jplan", &plan), JP_ERROR_IO);
  jp_set_log_callback(nullptr, nullptr);
  EXPECT_EQ(jp_plan_load_file("/nonexistent2.jplan", &plan), JP_ERROR_IO);
  ASSERT_EQ(captured.messages.size(), 1u);
  EXPECT_NE(captured.messages[0].find("/nonexistent.jplan"), std::string::npos);
  EXPECT_STREQ(jp_status_string(JP_ERROR_VERSION_MISMATCH), "plan schema version mismatch");
}

// An allocator that fails the n-th request and counts what is still live.
struct FailingAllocator {
  int fail_at = -1;
  int calls = 0;
  int live = 0;
};

void* failing_allocate(void* user, size_t bytes, size_t alignment) {
  auto* a = static_cast<FailingAllocator*>(user);
  if (a->calls++ == a->fail_at) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, bytes) != 0) {
    return nullptr;
  }
  ++a->live;
  return p;
}

void failing_deallocate(void* user, void* p) {
  --static_cast<FailingAllocator*>(user)->live;
  std::free(p);
}

// Fails every allocation of load + context creation in turn: each failure must surface as
// JP_ERROR_OUT_OF_MEMORY with nothing leaked; past the last allocation everything succeeds.
TEST(Memory, EveryAllocationFailureIsReportedAndLeaksNothing) {
  const auto bytes = build_plan(conv_relu_plan());
  FailingAllocator state;
  const jp_allocator allocator{failing_allocate, failing_deallocate, &state};
  jp_set_allocator(&allocator);
  bool completed = false;
  for (int n = 0; n < 100 && !completed; ++n) {
    state = FailingAllocator{n, 0, 0};
    jp_plan* plan = nullptr;
    jp_context* ctx = nullptr;
    jp_status status = jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan);
    if (status == JP_OK) status = jp_context_create(plan, nullptr, &ctx);
    if (status == JP_OK) {
      completed = state.calls <= n;  // the n-th allocation was never asked for
      const auto x = random_input(5);
      EXPECT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
      EXPECT_EQ(jp_context_run(ctx), JP_OK);
      EXPECT_TRUE(completed) << "allocation " << n << " failed but nothing reported it";
    } else {
      EXPECT_EQ(status, JP_ERROR_OUT_OF_MEMORY) << "failing allocation " << n << ": "
                                               << jp_last_error();
    }
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
    EXPECT_EQ(state.live, 0) << "leak after failing allocation " << n;
  }
  jp_set_allocator(nullptr);
  EXPECT_TRUE(completed);
}

}  // namespace
}  // namespace jetplan::testing
