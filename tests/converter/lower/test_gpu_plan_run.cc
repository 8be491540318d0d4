// The spread of models (gpu_plan_models.h) converted for sm_90 (target h100; an H200 runs its
// plans too) and run on this machine's GPU against the same model's CPU plan, on the same
// random inputs: the 1-D and 3-D convs, InstanceNorm and GroupNorm end to end with the layout
// and precision passes around them. Skips, saying why, where no sm_90 GPU takes the plan (CI).
// Tolerance: |gpu - cpu| <= 3e-2 * |cpu| + 3e-2 for float outputs (float16 storage through a
// few layers, inputs and weights in [-1, 1]), NaN never passes; integer outputs bit for bit.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/converter/lower/gpu_plan_models.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

// Random bytes for every input of `plan` by its dtype: floats in [-1, 1], integers in [0, 4).
std::vector<std::vector<uint8_t>> random_inputs(const jp_plan* plan, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<uint8_t>> out;
  for (int32_t i = 0; i < jp_plan_num_inputs(plan); ++i) {
    jp_tensor_desc d{};
    EXPECT_EQ(jp_plan_input_desc(plan, i, &d), JP_OK);
    std::vector<uint8_t> bytes(d.bytes);
    if (d.dtype == JP_FLOAT32) {
      std::uniform_real_distribution<float> dist(-1.f, 1.f);
      for (size_t k = 0; k + 4 <= bytes.size(); k += 4) {
        const float v = dist(rng);
        std::memcpy(&bytes[k], &v, 4);
      }
    } else {
      const size_t elem = d.dtype == JP_INT64 ? 8 : 4;
      for (size_t k = 0; k + elem <= bytes.size(); k += elem) bytes[k] = uint8_t(rng() % 4);
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

// `model` converted for sm_90 (target h100), and loaded on this machine's GPU: null (with the
// runtime's reason in *why) where none takes it.
jp_plan* gpu_plan(const GpuPlanModel& model, ConvertResult* g, std::string* why) {
  ConvertOptions gpu;
  gpu.target = "h100";
  *g = convert_onnx(model.builder.bytes(), "model.onnx", gpu);
  jp_plan* loaded = nullptr;
  if (jp_plan_load_buffer(g->plan.data(), g->plan.size(), JP_LOAD_COPY, &loaded) == JP_OK)
    return loaded;
  *why = jp_last_error();
  return nullptr;
}

TEST(GpuPlanRun, SpreadMatchesTheCpuPlanOnThisGpu) {
  for (const GpuPlanModel& model : gpu_plan_models()) {
    if (!model.compare_on_gpu) continue;
    SCOPED_TRACE(model.name);
    ConvertResult g;
    std::string why;
    jp_plan* loaded = gpu_plan(model, &g, &why);
    if (loaded == nullptr) GTEST_SKIP() << "no sm_90 GPU takes the plan here: " << why;
    const std::vector<std::vector<uint8_t>> inputs = random_inputs(loaded, 17);
    std::vector<bool> is_float;  // per output: compared within the tolerance, else bit for bit
    for (int32_t o = 0; o < jp_plan_num_outputs(loaded); ++o) {
      jp_tensor_desc d{};
      EXPECT_EQ(jp_plan_output_desc(loaded, o, &d), JP_OK);
      is_float.push_back(d.dtype == JP_FLOAT32);
    }
    jp_plan_destroy(loaded);
    std::vector<PlanInput> in;
    for (const auto& b : inputs) in.push_back({b.data(), b.size()});
    const std::vector<PlanOutput> want = run_plan_inputs(convert_ok(model.builder).plan, in);
    const std::vector<PlanOutput> got = run_plan_inputs(g.plan, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) {
      if (!is_float[o]) {
        EXPECT_EQ(got[o].bytes, want[o].bytes) << "output " << o;
        continue;
      }
      const std::vector<float> w = want[o].as<float>(), v = got[o].as<float>();
      ASSERT_EQ(v.size(), w.size()) << "output " << o;
      size_t off = 0, first = w.size();
      for (size_t i = 0; i < w.size(); ++i)
        if (!(std::fabs(v[i] - w[i]) <= 3e-2 + 3e-2 * std::fabs(w[i])) && off++ == 0) first = i;
      EXPECT_EQ(off, 0u) << "output " << o << ": " << off << " of " << w.size()
                         << " elements off, the first " << first << ": got "
                         << (first < w.size() ? v[first] : 0.f) << ", want "
                         << (first < w.size() ? w[first] : 0.f);
    }
  }
}

// Early (programmatic dependent) launches, the default on sm_90+, change only when a kernel
// starts, never what it computes: every output equals, bit for bit, that of the same plan with
// every kernel started after the one before (JP_CONTEXT_NO_EARLY_LAUNCH), run after run. A
// kernel that touched a tensor before waiting for its predecessor would read half-written
// inputs or overwrite bytes still being read (the arena reuses them) and differ in some run.
TEST(GpuPlanRun, EarlyLaunchesGiveTheSameBits) {
  for (const GpuPlanModel& model : gpu_plan_models()) {
    if (!model.compare_on_gpu) continue;
    SCOPED_TRACE(model.name);
    ConvertResult g;
    std::string why;
    jp_plan* loaded = gpu_plan(model, &g, &why);
    if (loaded == nullptr) GTEST_SKIP() << "no sm_90 GPU takes the plan here: " << why;
    const std::vector<std::vector<uint8_t>> inputs = random_inputs(loaded, 23);
    jp_plan_destroy(loaded);
    std::vector<PlanInput> in;
    for (const auto& b : inputs) in.push_back({b.data(), b.size()});
    const std::vector<PlanOutput> want = run_plan_inputs(g.plan, in, JP_CONTEXT_NO_EARLY_LAUNCH);
    ASSERT_FALSE(want.empty());
    for (int run = 0; run < 10; ++run) {
      const std::vector<PlanOutput> got = run_plan_inputs(g.plan, in);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < want.size(); ++o)
        ASSERT_EQ(got[o].bytes, want[o].bytes) << "output " << o << ", run " << run;
    }
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
