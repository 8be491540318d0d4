// The loader treats a plan as untrusted input: every malformed plan gets a clear status and
// message, never a crash. Plans here are built by hand (plan_builder.h), including broken ones.
#include <gtest/gtest.h>
#include <jetplan/plan_steps.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "tests/runtime/conv_relu_plan.h"
#include "tests/runtime/load_checks.h"
#include "tests/runtime/plan_builder.h"

// Corrupt plans may ask for absurd arena sizes; the runtime must see the allocation fail (as it
// does in production) rather than have the sanitizer abort the process.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

namespace jetplan::testing {
namespace {

TEST(PlanLoader, RunsAHandBuiltPlan) {
  const auto bytes = build_plan(conv_relu_plan());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  EXPECT_EQ(jp_plan_num_inputs(plan), 1);
  EXPECT_EQ(jp_plan_num_outputs(plan), 1);
  EXPECT_EQ(jp_plan_num_steps(plan), 2);
  EXPECT_EQ(jp_plan_arena_bytes(plan), 256u);
  jp_tensor_desc desc;
  ASSERT_EQ(jp_plan_input_desc(plan, 0, &desc), JP_OK);
  EXPECT_STREQ(desc.name, "x");
  EXPECT_EQ(desc.rank, 4);
  EXPECT_EQ(desc.dims[1], 2);
  EXPECT_EQ(desc.bytes, 72u);
  const auto x = random_input(1);
  EXPECT_TRUE(near_all(run_plan(plan, x), expected_conv_relu(x)));
  jp_plan_destroy(plan);
}

TEST(PlanSchema, RoundTripsEveryField) {
  const PlanSpec spec = conv_relu_plan();
  const auto bytes = build_plan(spec);
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  ASSERT_TRUE(fb::VerifyPlanBuffer(verifier));
  ASSERT_TRUE(fb::PlanBufferHasIdentifier(bytes.data()));
  const fb::Plan* plan = fb::GetPlan(bytes.data());
  EXPECT_EQ(plan->schema_version(), static_cast<uint32_t>(JP_SCHEMA_VERSION));
  EXPECT_STREQ(plan->target()->name()->c_str(), "cpu");
  ASSERT_EQ(plan->tensors()->size(), spec.tensors.size());
  for (uint32_t i = 0; i < spec.tensors.size(); ++i) {
    const fb::Tensor* t = plan->tensors()->Get(i);
    EXPECT_EQ(t->name()->str(), spec.tensors[i].name);
    EXPECT_EQ(std::vector<int64_t>(t->shape()->begin(), t->shape()->end()),
              spec.tensors[i].shape);
    EXPECT_EQ(t->storage(), spec.tensors[i].storage);
    EXPECT_EQ(t->offset(), spec.tensors[i].offset);
  }
  const fb::Step* conv = plan->steps()->Get(0);
  EXPECT_EQ(conv->op(), fb::OpFamily::Conv);
  ASSERT_NE(conv->params_as_ConvParams(), nullptr);
  EXPECT_TRUE(conv->params_as_ConvParams()->has_bias());
  EXPECT_EQ(plan->steps()->Get(1)->params_as_ActivationParams()->activation()->kind(),
            fb::ActivationKind::Relu);
  ASSERT_EQ(plan->weights()->size(), spec.weights.size());
  EXPECT_EQ(std::memcmp(plan->weights()->data(), spec.weights.data(), spec.weights.size()), 0);
  EXPECT_EQ((plan->weights()->data() - bytes.data()) % 256, 0) << "weights are not 256-aligned";
  EXPECT_EQ(plan->arena_alignment(), 256u);
}

// FlatBuffers pads the end of the buffer; cutting only that padding loses nothing. Any cut into
// bytes the plan uses must be refused.
TEST(PlanLoader, RefusesTruncatedPlansAtEveryLength) {
  const auto bytes = build_plan(conv_relu_plan());
  size_t refused = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    jp_plan* plan = nullptr;
    const jp_status status = jp_plan_load_buffer(cut.data(), cut.size(), JP_LOAD_COPY, &plan);
    if (status == JP_OK) {
      for (size_t i = n; i < bytes.size(); ++i) {
        ASSERT_EQ(bytes[i], 0) << "a plan cut to " << n << " of " << bytes.size()
                               << " bytes was accepted, but byte " << i << " was not padding";
      }
      jp_plan_destroy(plan);
      continue;
    }
    ++refused;
    ASSERT_EQ(plan, nullptr);
    ASSERT_STRNE(jp_last_error(), "");
  }
  EXPECT_GE(refused, bytes.size() - 8);
}

// Random corruption: whatever the loader accepts must run without touching memory it should not
// (the sanitizer build makes that a failure).
TEST(PlanLoader, SurvivesRandomByteCorruption) {
  const auto bytes = build_plan(conv_relu_plan());
  const uint32_t seed = 1234;
  std::mt19937 rng(seed);
  int accepted = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bad = bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    jp_plan* plan = nullptr;
    if (jp_plan_load_buffer(bad.data(), bad.size(), JP_LOAD_COPY, &plan) != JP_OK) {
      ASSERT_EQ(plan, nullptr);
      ++refused;
      continue;
    }
    ++accepted;
    jp_context* ctx = nullptr;
    if (jp_context_create(plan, nullptr, &ctx) == JP_OK) {
      std::vector<uint8_t> x(72, 0);
      jp_tensor_desc desc;
      if (jp_plan_num_inputs(plan) > 0 && jp_plan_input_desc(plan, 0, &desc) == JP_OK) {
        x.resize(desc.bytes);
        EXPECT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size()), JP_OK);
      }
      EXPECT_EQ(jp_context_run(ctx), JP_OK);
      jp_context_destroy(ctx);
    }
    jp_plan_destroy(plan);
  }
  EXPECT_GT(refused, 0) << "seed " << seed;
  RecordProperty("accepted", accepted);
}

TEST(PlanLoader, RefusesWrongIdentifier) {
  auto bytes = build_plan(conv_relu_plan());
  std::memcpy(bytes.data() + 4, "TFL3", 4);
  expect_refused(bytes, JP_ERROR_INVALID_PLAN, "file identifier is 'TFL3'");
  expect_refused(std::vector<uint8_t>{'h', 'e', 'l', 'l', 'o'}, JP_ERROR_INVALID_PLAN,
                 "too short");
}

TEST(PlanLoader, RefusesOtherSchemaVersions) {
  PlanSpec spec = conv_relu_plan();
  spec.schema_version = JP_SCHEMA_VERSION + 1;
  expect_refused(build_plan(spec), JP_ERROR_VERSION_MISMATCH,
                 "schema version " + std::to_string(JP_SCHEMA_VERSION + 1));
  spec.schema_version = 0;
  expect_refused(build_plan(spec), JP_ERROR_VERSION_MISMATCH, "schema version 0");
}

TEST(PlanLoader, RefusesOutOfRangeIndices) {
  PlanSpec spec = conv_relu_plan();
  spec.steps[1].inputs = {99};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "tensor 99 of 5");
  spec = conv_relu_plan();
  spec.outputs = {{"y", 7}};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "output 'y' names tensor 7");
  spec = conv_relu_plan();
  spec.steps[0].outputs = {};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "has no outputs");
}

TEST(PlanLoader, RefusesBadOffsetsAndSizes) {
  PlanSpec spec = conv_relu_plan();
  spec.tensors[3].offset = 128;  // arena tensor at a misaligned offset
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "tensor 't': arena range");
  spec = conv_relu_plan();
  spec.arena_bytes = 64;  // tensor t (72 bytes) no longer fits
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "outside the 64-byte arena");
  spec = conv_relu_plan();
  spec.tensors[2].offset = 512;  // past the end of the weights
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "tensor 'bias': weight range");
  spec = conv_relu_plan();
  spec.tensors[1].offset = uint64_t{1} << 63;  // offset + size overflows
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "tensor 'w': weight range");
  spec = conv_relu_plan();
  spec.tensors[3].size_override = 4;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "does not match its shape");
  spec = conv_relu_plan();
  spec.tensors[3].shape = {1, -2, 3, 3};
  spec.tensors[3].size_override = 0;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "invalid dim 1 = -2");
  spec = conv_relu_plan();  // an empty tensor is valid, but nothing is computed from it
  spec.tensors[3].shape = {1, 0, 3, 3};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN,
                 "step 'relu' reads the empty tensor 't' but writes 'y', which is not empty");
  spec = conv_relu_plan();
  spec.tensors[3].shape = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "rank 9");
}

// conv_relu_plan with relu reading t through a view [1, 18] and writing y [1, 18].
PlanSpec view_plan() {
  PlanSpec p = conv_relu_plan();
  p.tensors[4].shape = {1, 18};
  p.tensors.push_back({"t_flat", {1, 18}, fb::Storage::Arena, 0});
  p.tensors.back().view_of = 3;
  p.steps[1].inputs = {5};
  return p;
}

TEST(PlanLoader, ViewsReadTheBytesOfTheirTensor) {
  const auto bytes = build_plan(view_plan());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  const auto x = random_input(7);
  EXPECT_TRUE(near_all(run_plan(plan, x), expected_conv_relu(x)));
  jp_plan_destroy(plan);
}

TEST(PlanLoader, RefusesBadViews) {
  const char* bad_view = "tensor 't_flat' is a view of tensor";
  PlanSpec spec = view_plan();
  spec.tensors[5].view_of = 1;  // a weight
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, bad_view);
  spec = view_plan();
  spec.tensors[5].view_of = 5;  // itself
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, bad_view);
  spec = view_plan();
  spec.tensors[5].view_of = 6;  // no such tensor
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, bad_view);
  spec = view_plan();
  spec.tensors[5].view_of = -7;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, bad_view);
  spec = view_plan();
  spec.tensors[5].shape = {1, 20};  // larger than t
  spec.tensors[4].shape = {1, 20};
  spec.arena_bytes = 512;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, bad_view);
  spec = view_plan();
  spec.tensors[5].offset = 256;  // not at t's bytes
  spec.arena_bytes = 512;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, bad_view);
  spec = view_plan();
  spec.tensors[4] = {"y", {1, 18}, fb::Storage::Binding, 0, 0};
  spec.tensors[4].view_of = 3;  // a binding cannot be a view
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "tensor 'y' is a view but not an arena");
  spec = view_plan();
  spec.steps[0].outputs = {5};  // conv writes the view
  spec.steps[1].inputs = {3};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN,
                 "step 'conv' writes tensor 't_flat', which is a weight, a graph input or a view");
}

TEST(PlanLoader, RefusesInconsistentSteps) {
  PlanSpec spec = conv_relu_plan();
  spec.steps[1].outputs = {1};  // Relu writing into a weight
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "writes tensor 'w'");
  spec = conv_relu_plan();
  spec.steps[0].outputs = {0};  // writing into a graph input
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "writes tensor 'x'");
  spec = conv_relu_plan();
  spec.tensors[1].shape = {2, 3, 1, 1};  // weight channels do not match x
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "step 'conv': weight channels");
  spec = conv_relu_plan();
  spec.steps[0].op = fb::OpFamily::Pool;  // carries ConvParams
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "wrong params table");
  spec = conv_relu_plan();
  spec.steps[0].op = static_cast<fb::OpFamily>(200);
  expect_refused(build_plan(spec), JP_ERROR_UNSUPPORTED, "op family 200");
  spec = conv_relu_plan();
  spec.steps[0].inputs = {0, 1};  // has_bias but no bias input
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "has 2 inputs, expected 3..3");
  spec = conv_relu_plan();
  spec.tensors[3].shape = {1, 2, 2, 3};  // conv output spatial size wrong
  spec.tensors[4].shape = {1, 2, 2, 3};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "spatial dim 0 is 2, the window gives 3");
}

// a [2,3] x b [3,2] + c [2] + r [2,2] -> y [2,2]: runs to the formula; a residual of another
// shape, or a missing one, is refused by name.
TEST(PlanLoader, GemmResidualRunsAndIsChecked) {
  PlanSpec p;
  p.tensors = {
      {"a", {2, 3}, fb::Storage::Binding, 0, 0}, {"b", {3, 2}, fb::Storage::Weight, 0},
      {"c", {2}, fb::Storage::Weight, 256},      {"r", {2, 2}, fb::Storage::Binding, 0, 1},
      {"y", {2, 2}, fb::Storage::Binding, 0, 0},
  };
  p.inputs = {{"a", 0}, {"r", 3}};
  p.outputs = {{"y", 4}};
  const float b[6] = {1, 2, 3, 4, 5, 6}, c[2] = {0.5f, -0.5f};
  p.weights.assign(512, 0);
  std::memcpy(p.weights.data(), b, sizeof(b));
  std::memcpy(p.weights.data() + 256, c, sizeof(c));
  StepSpec gemm = step_spec("fc", fb::OpFamily::Gemm, {0, 1, 2, 3}, {4});
  gemm.params = [](flatbuffers::FlatBufferBuilder& fbb) {
    const fb::Activation none(fb::ActivationKind::None, 0, 0);
    auto params = fb::CreateGemmParams(fbb, false, false, 1.f, 1.f, /*has_c=*/true, &none,
                                       /*has_residual=*/true);
    return std::make_pair(fb::StepParams::GemmParams, params.Union());
  };
  p.steps = {gemm};
  jp_plan* plan = nullptr;
  const std::vector<uint8_t> bytes = build_plan(p);
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  const float a[6] = {1, 0, -1, 2, 1, 0}, r[4] = {10, 20, 30, 40};
  ASSERT_EQ(jp_context_set_input(ctx, 0, a, sizeof(a)), JP_OK);
  ASSERT_EQ(jp_context_set_input(ctx, 1, r, sizeof(r)), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* out = nullptr;
  size_t size = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &out, &size), JP_OK);
  ASSERT_EQ(size, 4 * sizeof(float));
  const float* y = static_cast<const float*>(out);
  // a b = [[1-5, 2-6], [2+3, 4+4]] = [[-4, -4], [5, 8]]; + c + r
  EXPECT_EQ(y[0], -4 + 0.5f + 10);
  EXPECT_EQ(y[1], -4 - 0.5f + 20);
  EXPECT_EQ(y[2], 5 + 0.5f + 30);
  EXPECT_EQ(y[3], 8 - 0.5f + 40);
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);

  PlanSpec bad = p;
  bad.tensors[3].shape = {1, 2};  // broadcasts, but R must have exactly the output's shape
  expect_refused(build_plan(bad), JP_ERROR_INVALID_PLAN,
                 "step 'fc': residual R must have exactly the output's shape");
  bad = p;
  bad.steps[0].inputs = {0, 1, 2};  // has_residual but no R
  expect_refused(build_plan(bad), JP_ERROR_INVALID_PLAN, "has 3 inputs, expected 4..4");
}

TEST(PlanLoader, RefusesBadBindings) {
  PlanSpec spec = conv_relu_plan();
  spec.outputs = {{"y", 3}};  // an arena tensor as output
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "is not a binding");
  spec = conv_relu_plan();
  spec.inputs = {{"x", 0}, {"x2", 0}};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "bound twice");
  spec = conv_relu_plan();
  spec.tensors[4].binding = 3;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "has binding 3, expected 0");
  spec = conv_relu_plan();
  spec.outputs = {};
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "'y' is a binding but no input");
}

TEST(PlanLoader, RefusesCudaPlansItCannotRun) {
  PlanSpec spec = conv_relu_plan();
  spec.backend = fb::Backend::CUDA;
  expect_refused(build_plan(spec), JP_ERROR_INVALID_PLAN, "names no SM architecture");
  // A CUDA plan whose steps name no kernel: refused at bind, whatever the machine has: no GPU
  // (CI), another GPU than sm_1 (every real one), or the missing kernel.
  spec.sm_arch = 1;
  const auto bytes = build_plan(spec);
  jp_plan* plan = reinterpret_cast<jp_plan*>(0x1);
  const jp_status status = jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan);
  EXPECT_TRUE(status == JP_ERROR_DEVICE || status == JP_ERROR_UNSUPPORTED) << jp_last_error();
  EXPECT_EQ(plan, nullptr);
  const std::string message = jp_last_error();
  EXPECT_TRUE(message.find("CUDA driver") != std::string::npos ||
              message.find("no usable NVIDIA GPU") != std::string::npos ||
              message.find("built for sm_1 (target 'test-gpu')") != std::string::npos)
      << message;
  // Without a device the kernel-less steps are refused as binding refuses them; the
  // converter's flag for plans whose kernels are still to be chosen lets them pass, and only
  // with JP_LOAD_NO_DEVICE.
  EXPECT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE,
                                &plan),
            JP_ERROR_INVALID_PLAN);
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(jp_last_error()).find("(Conv) names no CUDA kernel"), std::string::npos)
      << jp_last_error();
  EXPECT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_KERNELS_PENDING, &plan),
            JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("needs JP_LOAD_NO_DEVICE"), std::string::npos);
  // Verified without a device: descriptions are readable, contexts are refused.
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(),
                                JP_LOAD_COPY | JP_LOAD_NO_DEVICE | JP_LOAD_KERNELS_PENDING, &plan),
            JP_OK)
      << jp_last_error();
  EXPECT_EQ(jp_plan_backend(plan), JP_BACKEND_CUDA);
  EXPECT_STREQ(jp_plan_device_name(plan), "");
  jp_context* ctx = nullptr;
  EXPECT_EQ(jp_context_create(plan, nullptr, &ctx), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("JP_LOAD_NO_DEVICE"), std::string::npos);
  EXPECT_EQ(ctx, nullptr);
  jp_plan_destroy(plan);
}

TEST(PlanLoader, ReportsFileErrors) {
  jp_plan* plan = nullptr;
  EXPECT_EQ(jp_plan_load_file("/nonexistent/model.jplan", &plan), JP_ERROR_IO);
  EXPECT_NE(std::string(jp_last_error()).find("/nonexistent/model.jplan"), std::string::npos);
  EXPECT_EQ(jp_plan_load_file(nullptr, &plan), JP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(jp_plan_load_buffer(nullptr, 10, JP_LOAD_COPY, &plan), JP_ERROR_INVALID_ARGUMENT);
  const auto bytes = build_plan(conv_relu_plan());
  EXPECT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), 8u, &plan),  // the first unknown flag
            JP_ERROR_INVALID_ARGUMENT);
}

TEST(PlanLoader, BorrowsAlignedBuffersAndRefusesMisalignedOnes) {
  const auto bytes = build_plan(conv_relu_plan());
  void* aligned = nullptr;
  ASSERT_EQ(posix_memalign(&aligned, 256, bytes.size() + 256), 0);
  std::memcpy(aligned, bytes.data(), bytes.size());
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(aligned, bytes.size(), JP_LOAD_BORROW, &plan), JP_OK)
      << jp_last_error();
  const auto x = random_input(7);
  EXPECT_TRUE(near_all(run_plan(plan, x), expected_conv_relu(x)));
  jp_plan_destroy(plan);
  uint8_t* shifted = static_cast<uint8_t*>(aligned) + 8;
  std::memmove(shifted, aligned, bytes.size());
  EXPECT_EQ(jp_plan_load_buffer(shifted, bytes.size(), JP_LOAD_BORROW, &plan),
            JP_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(jp_last_error()).find("256-byte aligned"), std::string::npos);
  std::free(aligned);
}

}  // namespace
}  // namespace jetplan::testing
