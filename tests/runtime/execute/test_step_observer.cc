// The step observer (jp_context_set_step_observer): after each step of a CPU run, each output
// of the step with its name, dtype, dims and host data; the last observation of a plan output
// equals what get_output returns; null clears it; a run with an observer allocates nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/runtime/conv_relu_plan.h"

namespace jetplan::testing {
namespace {

struct Seen {
  int32_t step;
  std::string name;
  jp_dtype dtype;
  std::vector<int64_t> dims;
  std::vector<float> values;
};

void record(void* user, int32_t step, const char* name, jp_dtype dtype, const int64_t* dims,
            int32_t rank, const void* data) {
  Seen seen{step, name, dtype, std::vector<int64_t>(dims, dims + rank), {}};
  size_t n = 1;
  for (int64_t d : seen.dims) n *= static_cast<size_t>(d);
  seen.values.resize(n);
  std::memcpy(seen.values.data(), data, n * sizeof(float));
  static_cast<std::vector<Seen>*>(user)->push_back(std::move(seen));
}

// The conv's output before the Relu: conv_relu_plan's weights, without the clamp.
std::vector<float> expected_conv(const std::vector<float>& x) {
  std::vector<float> t(18);
  for (int i = 0; i < 9; ++i) {
    t[i] = x[i] + 2.f * x[9 + i] + 0.25f;
    t[9 + i] = -x[i] + 0.5f * x[9 + i] - 1.f;
  }
  return t;
}

TEST(StepObserver, SeesEveryStepOutputInOrder) {
  const auto bytes = build_plan(conv_relu_plan());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK);
  std::vector<Seen> seen;
  ASSERT_EQ(jp_context_set_step_observer(ctx, record, &seen), JP_OK);
  const std::vector<float> x = random_input(7);
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK);

  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].step, 0);
  EXPECT_EQ(seen[0].name, "t");
  EXPECT_EQ(seen[1].step, 1);
  EXPECT_EQ(seen[1].name, "y");
  for (const Seen& s : seen) {
    EXPECT_EQ(s.dtype, JP_FLOAT32);
    EXPECT_EQ(s.dims, (std::vector<int64_t>{1, 2, 3, 3}));
  }
  EXPECT_TRUE(near_all(seen[0].values, expected_conv(x)));
  const void* data = nullptr;
  size_t n = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &n), JP_OK);
  ASSERT_EQ(n, seen[1].values.size() * 4);
  EXPECT_EQ(std::memcmp(data, seen[1].values.data(), n), 0);
  EXPECT_TRUE(near_all(seen[1].values, expected_conv_relu(x)));

  // enqueue runs a CPU plan at once, observed the same way.
  ASSERT_EQ(jp_context_enqueue(ctx), JP_OK);
  ASSERT_EQ(jp_context_synchronize(ctx), JP_OK);
  EXPECT_EQ(seen.size(), 4u);

  // A null function clears it.
  ASSERT_EQ(jp_context_set_step_observer(ctx, nullptr, &seen), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK);
  EXPECT_EQ(seen.size(), 4u);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(StepObserver, NullContextIsRefused) {
  EXPECT_EQ(jp_context_set_step_observer(nullptr, record, nullptr), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("null context"), std::string::npos);
}

int allocations = 0;
void* counting_allocate(void*, size_t bytes, size_t alignment) {
  ++allocations;
  void* p = nullptr;
  return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, bytes) == 0
             ? p
             : nullptr;
}
void counting_deallocate(void*, void* p) {
  std::free(p);
}

void count_calls(void* user, int32_t, const char*, jp_dtype, const int64_t*, int32_t, const void*) {
  ++*static_cast<int*>(user);
}

// House rule: nothing is allocated during a run, observer or not.
TEST(StepObserver, RunWithAnObserverAllocatesNothing) {
  const jp_allocator allocator{counting_allocate, counting_deallocate, nullptr};
  jp_set_allocator(&allocator);
  const auto bytes = build_plan(conv_relu_plan());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK);
  int calls = 0;
  ASSERT_EQ(jp_context_set_step_observer(ctx, count_calls, &calls), JP_OK);
  const std::vector<float> x = random_input(8);
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  const int before = allocations;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(jp_context_run(ctx), JP_OK);
  EXPECT_EQ(allocations, before);
  EXPECT_EQ(calls, 6);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  jp_set_allocator(nullptr);
}

}  // namespace
}  // namespace jetplan::testing
