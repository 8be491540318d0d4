// Running a converted plan once, in process, with the runtime (the CPU backend: the plans these
// tests convert target it, or run their CPU twins): load, one context, the inputs in binding
// order, one run, then every output's bytes and run-time dims. Shared by the converter tests
// that check plans by numbers (ir_model_util.h, quantized_util.h, passes/test_fuse_pointwise.cc,
// lower/test_gpu_layout_cpu.cc).
#pragma once

#include <gtest/gtest.h>
#include <jetplan/jetplan.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {

// Converts; the plan must satisfy the plan contract (plan_contract.h) and the runtime's loader
// (the contract's enforcer) must accept it. An empty result when the conversion fails; every
// problem fails the test.
inline ConvertResult convert_and_load(const ModelBuilder& m, const ConvertOptions& options = {}) {
  ConvertResult r = convert_ok(m, options);
  if (r.plan.empty()) return r;  // the conversion failed
  jp_plan* plan = nullptr;
  if (jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY, &plan) != JP_OK)
    ADD_FAILURE() << "the runtime refuses the plan: " << jp_last_error();
  jp_plan_destroy(plan);
  return r;
}

// m converted and loaded (convert_and_load), its plan read and one step of it found (by
// convert_to_step, quantized_util.h, or convert_to_first_step, ir_model_util.h). plan and step
// point into result.plan; step is null, and the test has failed, where any of the three failed.
struct ConvertedStep {
  ConvertResult result;
  const fb::Plan* plan = nullptr;
  const fb::Step* step = nullptr;
};

// One output as the run left it (run-time extents applied).
struct PlanOutput {
  std::vector<uint8_t> bytes;
  std::vector<int64_t> dims;
  template <typename T>
  std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

// An input's bytes, in binding order; the caller keeps them alive for the call.
struct PlanInput {
  const void* data;
  size_t bytes;
};

// Loads `plan`, runs it once on `inputs` (a context made with `context_flags`, JP_CONTEXT_*;
// with `observer` as its step observer when one is given) and returns every output. Each
// failing call fails the test with the runtime's message; nothing is returned when the plan
// does not load or no context can be made.
inline std::vector<PlanOutput> run_plan_inputs(const std::vector<uint8_t>& plan,
                                               const std::vector<PlanInput>& inputs,
                                               uint32_t context_flags = 0,
                                               jp_step_observer_fn observer = nullptr,
                                               void* observer_user = nullptr) {
  std::vector<PlanOutput> outs;
  jp_plan* p = nullptr;
  if (jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_COPY, &p) != JP_OK) {
    ADD_FAILURE() << "load: " << jp_last_error();
    return outs;
  }
  jp_context* ctx = nullptr;
  jp_context_options options{};
  options.flags = context_flags;
  if (jp_context_create(p, &options, &ctx) != JP_OK) {
    ADD_FAILURE() << "context: " << jp_last_error();
    jp_plan_destroy(p);
    return outs;
  }
  EXPECT_EQ(static_cast<size_t>(jp_plan_num_inputs(p)), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(jp_context_set_input(ctx, static_cast<int32_t>(i), inputs[i].data, inputs[i].bytes),
              JP_OK)
        << "input " << i << ": " << jp_last_error();
  if (observer != nullptr) {
    EXPECT_EQ(jp_context_set_step_observer(ctx, observer, observer_user), JP_OK) << jp_last_error();
  }
  EXPECT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  for (int32_t o = 0; o < jp_plan_num_outputs(p); ++o) {
    const void* data = nullptr;
    size_t size = 0;
    jp_tensor_desc desc{};
    EXPECT_EQ(jp_context_get_output(ctx, o, &data, &size), JP_OK);
    EXPECT_EQ(jp_context_output_desc(ctx, o, &desc), JP_OK);
    PlanOutput out;
    out.bytes.assign(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size);
    out.dims.assign(desc.dims, desc.dims + desc.rank);
    outs.push_back(std::move(out));
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(p);
  return outs;
}

// A GPU plan's outputs, `runs` times with early (programmatic dependent) launches, equal bit for
// bit to those of one run with every kernel started after the one before
// (JP_CONTEXT_NO_EARLY_LAUNCH): early launches change when a kernel starts, never what it writes.
inline void expect_early_launches_give_the_same_bits(const std::vector<uint8_t>& plan,
                                                     const std::vector<PlanInput>& inputs,
                                                     int runs = 10) {
  const std::vector<PlanOutput> want = run_plan_inputs(plan, inputs, JP_CONTEXT_NO_EARLY_LAUNCH);
  ASSERT_FALSE(want.empty());
  for (int run = 0; run < runs; ++run) {
    const std::vector<PlanOutput> got = run_plan_inputs(plan, inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o)
      ASSERT_EQ(got[o].bytes, want[o].bytes) << "output " << o << ", run " << run;
  }
}

// run_plan_inputs on float32 inputs.
inline std::vector<PlanOutput> run_plan(const std::vector<uint8_t>& plan,
                                        const std::vector<std::vector<float>>& inputs) {
  std::vector<PlanInput> in;
  for (const std::vector<float>& v : inputs) in.push_back({v.data(), v.size() * sizeof(float)});
  return run_plan_inputs(plan, in);
}

// Every output's values as float32.
inline std::vector<std::vector<float>> float_outputs(const std::vector<PlanOutput>& outs) {
  std::vector<std::vector<float>> v;
  for (const PlanOutput& o : outs) v.push_back(o.as<float>());
  return v;
}

}  // namespace jetplan::converter::testing
