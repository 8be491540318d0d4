// Tensors of the later schema revisions through the loader and the CPU backend: empty tensors
// (an extent of 0, 0 bytes: the steps writing only empty tensors are skipped, empty inputs and
// outputs bind with 0 bytes) and the dtypes Int16, UInt16, UInt32, UInt64, BFloat16 (CPU plans
// only).
// Plans are built by hand (plan_builder.h), including ones the converter would not make.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/runtime/load_checks.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::testing {
namespace {

StepSpec copy_step(const std::string& name, uint32_t in, uint32_t out) {
  return step_spec(name, fb::OpFamily::Copy, {in}, {out});
}

// Inputs e [0, 3] (empty) and x [2] of `dtype`; outputs y = x (a Copy) and z [3, 0] (written by
// a Copy from e: nothing to do).
PlanSpec empty_io_plan(fb::DType dtype = fb::DType::Float32) {
  PlanSpec p;
  p.tensors = {
      {"e", {0, 3}, fb::Storage::Binding, 0, 0},
      {"x", {2}, fb::Storage::Binding, 0, 1},
      {"y", {2}, fb::Storage::Binding, 0, 0},
      {"z", {3, 0}, fb::Storage::Binding, 0, 1},
  };
  for (TensorSpec& t : p.tensors) t.dtype = dtype;
  p.inputs = {{"e", 0}, {"x", 1}};
  p.outputs = {{"y", 2}, {"z", 3}};
  p.steps = {copy_step("copy_x", 1, 2), copy_step("copy_e", 0, 3)};
  return p;
}

TEST(EmptyTensors, APlanWithEmptyInputsAndOutputsLoadsAndRuns) {
  jp_plan* plan = load_plan_bytes(build_plan(empty_io_plan()));
  ASSERT_NE(plan, nullptr);
  jp_tensor_desc desc;
  ASSERT_EQ(jp_plan_input_desc(plan, 0, &desc), JP_OK);
  EXPECT_EQ(desc.rank, 2);
  EXPECT_EQ(desc.dims[0], 0);
  EXPECT_EQ(desc.bytes, 0u);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  // An empty input takes 0 bytes from any pointer, null included; other sizes are refused.
  EXPECT_EQ(jp_context_set_input(ctx, 0, nullptr, 0), JP_OK) << jp_last_error();
  const float junk[1] = {1.f};
  EXPECT_EQ(jp_context_set_input(ctx, 0, junk, 4), JP_ERROR_SHAPE_MISMATCH);
  const float x[2] = {1.5f, -2.f};
  ASSERT_EQ(jp_context_set_input(ctx, 1, x, sizeof x), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* data = nullptr;
  size_t bytes = 1;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &bytes), JP_OK);
  ASSERT_EQ(bytes, sizeof x);
  EXPECT_EQ(std::memcmp(data, x, sizeof x), 0);
  ASSERT_EQ(jp_context_get_output(ctx, 1, &data, &bytes), JP_OK);
  EXPECT_EQ(bytes, 0u);
  EXPECT_NE(data, nullptr);  // safe to hand to memcpy with its size of 0
  float profile[2] = {-1.f, -1.f};
  EXPECT_EQ(jp_context_profile_steps(ctx, profile, 2), JP_OK);  // the skipped step runs too
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(EmptyTensors, OnlyEmptyTensorsEverywhereIsAValidPlan) {
  // No arena, no bindings with bytes: nothing is allocated and the run does nothing.
  PlanSpec p = empty_io_plan();
  p.tensors[1].shape = {0};
  p.tensors[2].shape = {0};
  jp_plan* plan = load_plan_bytes(build_plan(p));
  ASSERT_NE(plan, nullptr);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  EXPECT_EQ(jp_context_set_input(ctx, 1, nullptr, 0), JP_OK);
  EXPECT_EQ(jp_context_run(ctx), JP_OK);
  const void* data = nullptr;
  size_t bytes = 1;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &bytes), JP_OK);
  EXPECT_EQ(bytes, 0u);
  EXPECT_NE(data, nullptr);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(EmptyTensors, AStepWritingOnlyEmptyTensorsIsNeitherPreparedNorRun) {
  // A Conv step with no params that make sense: it writes only the empty z, so the loader never
  // reads them. An empty arena tensor at offset 0 of a 0-byte arena is in range.
  PlanSpec p = empty_io_plan();
  p.tensors.push_back({"w", {0}, fb::Storage::Arena, 0});
  StepSpec conv = copy_step("nonsense_conv", 0, 3);
  conv.op = fb::OpFamily::Conv;
  conv.inputs = {0, 4, 1};
  conv.params = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::ConvParams, fb::CreateConvParams(b).Union());
  };
  p.steps[1] = conv;
  jp_plan* plan = load_plan_bytes(build_plan(p));
  ASSERT_NE(plan, nullptr);
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  const float x[2] = {3.f, 4.f};
  ASSERT_EQ(jp_context_set_input(ctx, 1, x, sizeof x), JP_OK);
  EXPECT_EQ(jp_context_run(ctx), JP_OK);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(EmptyTensors, ReadingAnEmptyTensorIntoANonEmptyOneIsRefused) {
  PlanSpec p = empty_io_plan();
  StepSpec concat = copy_step("concat", 0, 2);
  concat.op = fb::OpFamily::Concat;
  concat.inputs = {0, 1};
  concat.params = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::ConcatParams, fb::CreateConcatParams(b, 0).Union());
  };
  p.tensors[0].shape = {0};
  p.steps[0] = concat;
  expect_refused(build_plan(p), JP_LOAD_COPY, JP_ERROR_INVALID_PLAN,
                 "step 'concat' reads the empty tensor 'e' but writes 'y', which is not empty");
}

TEST(EmptyTensors, NegativeDimsAreStillRefused) {
  PlanSpec p = empty_io_plan();
  p.tensors[0].shape = {-1, 3};
  p.tensors[0].size_override = 0;
  expect_refused(build_plan(p), JP_LOAD_COPY, JP_ERROR_INVALID_PLAN, "tensor 'e' has invalid dim 0");
}

// `p` as a CUDA plan (sm_87) whose steps `with_kernel` (indices) run jp_copy, loaded without a
// device: null, the test failed with the loader's reason, when it is refused.
jp_plan* load_cuda_copy_plan(PlanSpec p, std::initializer_list<size_t> with_kernel) {
  p.backend = fb::Backend::CUDA;
  p.sm_arch = 87;
  for (size_t i : with_kernel) {
    p.steps[i].kernel = "jp_copy";
    p.steps[i].launch = fb::LaunchConfig(1, 1, 1, 256, 1, 1, 0, 1);
  }
  const std::vector<uint8_t> bytes = build_plan(p);
  jp_plan* plan = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE,
                                &plan),
            JP_OK)
      << jp_last_error();
  return plan;
}

// CUDA plans take them: the step that writes only an empty tensor needs no kernel (it never
// runs), the other names its kernel; the plan loads without a device.
TEST(EmptyTensors, CudaPlansLoadThemWithoutADevice) {
  jp_plan* plan = load_cuda_copy_plan(empty_io_plan(), {0});
  ASSERT_NE(plan, nullptr);
  jp_plan_destroy(plan);
}

TEST(NarrowDtypes, CpuPlansMoveThemBitForBit) {
  for (fb::DType t : {fb::DType::Int16, fb::DType::UInt16, fb::DType::UInt32, fb::DType::UInt64,
                      fb::DType::BFloat16}) {
    SCOPED_TRACE(fb::EnumNameDType(t));
    jp_plan* plan = load_plan_bytes(build_plan(empty_io_plan(t)));
    ASSERT_NE(plan, nullptr);
    jp_tensor_desc desc;
    ASSERT_EQ(jp_plan_input_desc(plan, 1, &desc), JP_OK);
    EXPECT_EQ(static_cast<int>(desc.dtype), static_cast<int>(t));
    jp_context* ctx = nullptr;
    ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
    const uint64_t x[2] = {0xfedcba9876543210ull, 0x0123456789abcdefull};
    ASSERT_EQ(jp_context_set_input(ctx, 1, x, desc.bytes), JP_OK) << jp_last_error();
    ASSERT_EQ(jp_context_run(ctx), JP_OK);
    const void* data = nullptr;
    size_t bytes = 0;
    ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &bytes), JP_OK);
    ASSERT_EQ(bytes, desc.bytes);
    EXPECT_EQ(std::memcmp(data, x, bytes), 0);
    jp_context_destroy(ctx);
    jp_plan_destroy(plan);
  }
}

// CUDA plans carry int16, uint16, uint32, uint64 and bfloat16 tensors (byte movers, Cast and the
// Elementwise kernels take them): a plan of each, its copy step on jp_copy, loads and prepares
// without a device.
TEST(NarrowDtypes, CudaPlansLoadThemWithoutADevice) {
  for (fb::DType t : {fb::DType::Int16, fb::DType::UInt16, fb::DType::UInt32, fb::DType::UInt64,
                      fb::DType::BFloat16}) {
    SCOPED_TRACE(fb::EnumNameDType(t));
    PlanSpec p = empty_io_plan(t);
    p.tensors[0].shape = {1, 3};
    p.tensors[3].shape = {3, 1};
    jp_plan* plan = load_cuda_copy_plan(p, {0, 1});
    ASSERT_NE(plan, nullptr);
    jp_tensor_desc desc;
    ASSERT_EQ(jp_plan_input_desc(plan, 0, &desc), JP_OK);
    EXPECT_EQ(static_cast<int>(desc.dtype), static_cast<int>(t));
    jp_plan_destroy(plan);
  }
}

}  // namespace
}  // namespace jetplan::testing
