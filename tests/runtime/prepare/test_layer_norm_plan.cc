// LayerNorm steps at load: the RMS form (LayerNormParams.rms, ONNX RMSNormalization) runs and
// divides by the root mean square without subtracting the mean; an RMS step that claims a mean
// output is refused, naming the step. The INT8 plan's form writing Int8 (its last input the
// Float32 inverse scale) runs and rounds as int8_quantize does; malformed ones are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/runtime/load_checks.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::testing {
namespace {

// x [2, 4] (input), scale [4] (weight) -> y [2, 4], and with `mean` a mean output [2, 1].
PlanSpec rms_plan(bool rms, bool mean) {
  PlanSpec p;
  p.tensors = {
      {"x", {2, 4}, fb::Storage::Binding, 0, 0},
      {"scale", {4}, fb::Storage::Weight, 0},
      {"y", {2, 4}, fb::Storage::Binding, 0, 0},
  };
  p.inputs = {{"x", 0}};
  p.outputs = {{"y", 2}};
  if (mean) {
    p.tensors.push_back({"mean", {2, 1}, fb::Storage::Binding, 0, 1});
    p.outputs.push_back({"mean", 3});
  }
  const float scale[4] = {1.f, 2.f, 0.5f, -1.f};
  p.weights.assign(256, 0);
  std::memcpy(p.weights.data(), scale, sizeof(scale));
  StepSpec step = step_spec("rms", fb::OpFamily::LayerNorm, {0, 1},
                            mean ? std::vector<uint32_t>{2, 3} : std::vector<uint32_t>{2});
  step.params = [rms, mean](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(fb::StepParams::LayerNormParams,
                          fb::CreateLayerNormParams(b, 1, 0.f, false, mean, false, nullptr, rms)
                              .Union());
  };
  p.steps = {step};
  return p;
}

TEST(LayerNormPlan, RmsStepDividesByTheRootMeanSquare) {
  const std::vector<uint8_t> bytes = build_plan(rms_plan(true, false));
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  // Row 0: mean of squares 7.5 (a LayerNorm would subtract the mean 2.5); row 1: 4.
  const std::vector<float> x = {1, 2, 3, 4, 2, -2, 2, -2};
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &size), JP_OK);
  ASSERT_EQ(size, 8u * 4);
  const float* y = static_cast<const float*>(data);
  const float scale[4] = {1.f, 2.f, 0.5f, -1.f};
  const float r0 = 1.f / std::sqrt(7.5f);
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(y[i], x[i] * (i < 4 ? r0 : 0.5f) * scale[i % 4], 1e-6f) << i;
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(LayerNormPlan, RmsStepWithAMeanOutputIsRefused) {
  // The same step without rms loads: the refusal is the RMS form's.
  jp_plan* plan = load_plan_bytes(build_plan(rms_plan(false, true)));
  ASSERT_NE(plan, nullptr) << jp_last_error();
  jp_plan_destroy(plan);
  expect_refused(build_plan(rms_plan(true, true)), JP_ERROR_INVALID_PLAN,
                 "an RMS step writes no mean output");
  const std::string msg = jp_last_error();
  EXPECT_NE(msg.find("step 'rms'"), std::string::npos) << msg;
}

// x [2, 4] (input), scale [4] (weight), the inverse scale [1] (weight, `inv_dtype`) -> Int8 y
// [2, 4]; `mean`: a mean output [2, 1] as well.
PlanSpec int8_plan(fb::DType inv_dtype, bool mean) {
  PlanSpec p = rms_plan(false, mean);
  p.tensors[2].dtype = fb::DType::Int8;
  p.tensors.push_back({"inv_y", {1}, fb::Storage::Weight, 256, -1, inv_dtype});
  const float inv_y = 10.f;
  p.weights.resize(512, 0);
  std::memcpy(p.weights.data() + 256, &inv_y, sizeof(inv_y));
  p.steps[0].inputs = {0, 1, static_cast<uint32_t>(p.tensors.size() - 1)};
  return p;
}

TEST(LayerNormPlan, IntoInt8RoundsWithTheInverseScale) {
  const std::vector<uint8_t> bytes = build_plan(int8_plan(fb::DType::Float32, false));
  jp_plan* plan = nullptr;
  ASSERT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), JP_OK)
      << jp_last_error();
  jp_context* ctx = nullptr;
  ASSERT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  // Row 0: mean 2.5, variance 1.25; row 1: mean 0, variance 4 (the epsilon is 0).
  const std::vector<float> x = {1, 2, 3, 4, 2, -2, 2, -2};
  ASSERT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  ASSERT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* data = nullptr;
  size_t size = 0;
  ASSERT_EQ(jp_context_get_output(ctx, 0, &data, &size), JP_OK);
  ASSERT_EQ(size, 8u);
  const int8_t* y = static_cast<const int8_t*>(data);
  const float scale[4] = {1.f, 2.f, 0.5f, -1.f};
  for (int i = 0; i < 8; ++i) {
    const double mean = i < 4 ? 2.5 : 0.0, sd = i < 4 ? std::sqrt(1.25) : 2.0;
    const double want = std::nearbyint(10.0 * scale[i % 4] * (x[i] - mean) / sd);
    EXPECT_EQ(y[i], static_cast<int8_t>(want)) << i;
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
}

TEST(LayerNormPlan, MalformedIntoInt8StepsAreRefused) {
  expect_refused(build_plan(int8_plan(fb::DType::Float16, false)), JP_ERROR_UNSUPPORTED,
                 "a LayerNorm into Int8 takes x, scale and bias of one float dtype");
  expect_refused(build_plan(int8_plan(fb::DType::Float32, true)), JP_ERROR_INVALID_PLAN,
                 "a LayerNorm into Int8 writes no mean or inv_std_dev");
  PlanSpec missing = int8_plan(fb::DType::Float32, false);
  missing.steps[0].inputs.pop_back();  // no inverse scale
  expect_refused(build_plan(missing), JP_ERROR_INVALID_PLAN, "has 2 inputs and 1 outputs");
}

}  // namespace
}  // namespace jetplan::testing
