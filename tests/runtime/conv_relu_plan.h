// The runtime tests' smallest working plan: x [1,2,3,3] --Conv 1x1--> t --Relu--> y, the
// reference it must compute, and a runner (plan_builder.h builds it; no converter involved).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "jetplan/jetplan.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::testing {

// x [1,2,3,3] --Conv 1x1 (w [2,2,1,1], bias [2])--> t [1,2,3,3] --Relu--> y (output).
inline PlanSpec conv_relu_plan() {
  PlanSpec p;
  p.tensors = {
      {"x", {1, 2, 3, 3}, fb::Storage::Binding, 0, 0},
      {"w", {2, 2, 1, 1}, fb::Storage::Weight, 0},
      {"bias", {2}, fb::Storage::Weight, 256},
      {"t", {1, 2, 3, 3}, fb::Storage::Arena, 0},
      {"y", {1, 2, 3, 3}, fb::Storage::Binding, 0, 0},
  };
  p.inputs = {{"x", 0}};
  p.outputs = {{"y", 4}};
  p.arena_bytes = 256;
  const float w[4] = {1.f, 2.f, -1.f, 0.5f};  // y0 = x0 + 2 x1 + 0.25, y1 = -x0 + 0.5 x1 - 1
  const float bias[2] = {0.25f, -1.f};
  p.weights.assign(512, 0);
  std::memcpy(p.weights.data(), w, sizeof(w));
  std::memcpy(p.weights.data() + 256, bias, sizeof(bias));
  StepSpec conv = step_spec("conv", fb::OpFamily::Conv, {0, 1, 2}, {3});
  conv.params = [](flatbuffers::FlatBufferBuilder& b) {
    std::vector<int64_t> k = {1, 1};
    const fb::Activation none(fb::ActivationKind::None, 0, 0);
    auto params = fb::CreateConvParamsDirect(b, 1, &k, nullptr, nullptr, nullptr, nullptr,
                                             /*has_bias=*/true, false, &none);
    return std::make_pair(fb::StepParams::ConvParams, params.Union());
  };
  p.steps = {conv, relu_step(3, 4)};
  return p;
}

inline std::vector<float> run_plan(const jp_plan* plan, const std::vector<float>& x) {
  jp_context* ctx = nullptr;
  EXPECT_EQ(jp_context_create(plan, nullptr, &ctx), JP_OK) << jp_last_error();
  if (ctx == nullptr) return {};
  EXPECT_EQ(jp_context_set_input(ctx, 0, x.data(), x.size() * 4), JP_OK);
  EXPECT_EQ(jp_context_run(ctx), JP_OK);
  const void* data = nullptr;
  size_t bytes = 0;
  EXPECT_EQ(jp_context_get_output(ctx, 0, &data, &bytes), JP_OK);
  std::vector<float> y(bytes / 4);
  std::memcpy(y.data(), data, bytes);
  jp_context_destroy(ctx);
  return y;
}

inline std::vector<float> expected_conv_relu(const std::vector<float>& x) {
  std::vector<float> y(18);
  for (int i = 0; i < 9; ++i) {
    y[i] = std::max(0.f, x[i] + 2.f * x[9 + i] + 0.25f);
    y[9 + i] = std::max(0.f, -x[i] + 0.5f * x[9 + i] - 1.f);
  }
  return y;
}

// The kernel may sum in another order than the expression above: allow float rounding.
inline bool near_all(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::fabs(a[i] - b[i]) <= 1e-6f * (1.f + std::fabs(b[i])))) return false;
  }
  return true;
}

inline std::vector<float> random_input(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> x(18);
  for (float& v : x) v = dist(rng);
  return x;
}

}  // namespace jetplan::testing
