// What the import tests share: models of IR version 3 (opsets 1 to 6: initializers listed as
// graph inputs too), float ramps, and running a converted plan on float inputs in process.
#pragma once

#include <gtest/gtest.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {

// Runs the plan on float inputs (in graph input order) and returns output `index`.
inline std::vector<float> run_plan(const ConvertResult& r,
                                   const std::vector<std::vector<float>>& inputs, int index = 0) {
  jp_plan* plan = nullptr;
  jp_context* ctx = nullptr;
  std::vector<float> out;
  if (jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY, &plan) != JP_OK ||
      jp_context_create(plan, nullptr, &ctx) != JP_OK) {
    ADD_FAILURE() << "the plan does not load: " << jp_last_error();
    jp_plan_destroy(plan);
    return out;
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(jp_context_set_input(ctx, static_cast<int32_t>(i), inputs[i].data(),
                                   inputs[i].size() * sizeof(float)),
              JP_OK)
        << jp_last_error();
  EXPECT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  const void* data = nullptr;
  size_t bytes = 0;
  if (jp_context_get_output(ctx, index, &data, &bytes) == JP_OK) {
    const float* f = static_cast<const float*>(data);
    out.assign(f, f + bytes / sizeof(float));
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return out;
}

inline std::vector<float> ramp(size_t n, float scale = 0.1f, float offset = -1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 23);
  return v;
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5f * (1.f + std::fabs(want[i]))) << "element " << i;
}

// An IR version 3 model (opsets 1 to 6 were written so): initializers are graph inputs too.
inline ModelBuilder old_model(int opset) {
  ModelBuilder m(opset);
  m.model().set_ir_version(3);
  return m;
}

// A float initializer that is also listed as a graph input, as IR version 3 requires.
inline void weight(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                   const std::vector<float>& values) {
  m.input(name, dims);
  m.initializer(name, dims, values);
}

}  // namespace jetplan::converter::testing
