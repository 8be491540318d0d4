// LayerNorm steps at load: the RMS form (LayerNormParams.rms, ONNX RMSNormalization) runs and
// divides by the root mean square without subtracting the mean; an RMS step that claims a mean
// output is refused, naming the step.
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

}  // namespace
}  // namespace jetplan::testing
