// The spread of models (gpu_plan_models.h) converted for sm_90 (target h100; an H200 runs its
// plans too) and run on this machine's GPU against the same model's CPU plan, on the same
// random inputs: the 1-D and 3-D convs, InstanceNorm and GroupNorm end to end with the layout
// and precision passes around them. Skips, saying why, where no sm_90 GPU takes the plan (CI).
// Tolerance: |gpu - cpu| <= 3e-2 * |cpu| + 3e-2 for float outputs (float16 storage through a
// few layers, inputs and weights in [-1, 1]), 1e-4 * |cpu| + 1e-4 for the Float32 plans
// (--precision fp32), NaN never passes; integer outputs bit for bit.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/converter/lower/gpu_plan_models.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {
namespace {

// Random bytes for every input of `plan` by its dtype: floats (float32, float64, bfloat16) in
// [-1, 1], integers and bools in [0, 4) (a bool's byte, 0 to 3: nonzero is true).
std::vector<std::vector<uint8_t>> random_inputs(const jp_plan* plan, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<std::vector<uint8_t>> out;
  for (int32_t i = 0; i < jp_plan_num_inputs(plan); ++i) {
    jp_tensor_desc d{};
    EXPECT_EQ(jp_plan_input_desc(plan, i, &d), JP_OK);
    size_t count = 1;
    for (int32_t k = 0; k < d.rank; ++k) count *= static_cast<size_t>(d.dims[k]);
    std::vector<uint8_t> bytes(d.bytes);
    const size_t elem = count > 0 ? d.bytes / count : 1;
    for (size_t k = 0; k < count; ++k) {
      uint8_t* at = bytes.data() + k * elem;
      if (d.dtype == JP_FLOAT32) {
        const float v = dist(rng);
        std::memcpy(at, &v, 4);
      } else if (d.dtype == JP_FLOAT64) {
        const double v = dist(rng);
        std::memcpy(at, &v, 8);
      } else if (d.dtype == JP_BFLOAT16) {
        const float v = dist(rng);
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        const auto upper = static_cast<uint16_t>(bits >> 16);  // truncated: any bfloat16 will do
        std::memcpy(at, &upper, 2);
      } else {
        at[0] = uint8_t(rng() % 4);  // little endian: the value
      }
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

// `model` converted for sm_90 (target h100), and loaded on this machine's GPU: null (with the
// runtime's reason in *why) where none takes it.
jp_plan* gpu_plan(const GpuPlanModel& model, ConvertResult* g, std::string* why,
                  ConvertOptions::Precision precision = ConvertOptions::Precision::kFp16) {
  ConvertOptions gpu;
  gpu.target = "h100";
  gpu.precision = precision;
  *g = convert_onnx(model.builder.bytes(), "model.onnx", gpu);
  jp_plan* loaded = nullptr;
  if (jp_plan_load_buffer(g->plan.data(), g->plan.size(), JP_LOAD_COPY, &loaded) == JP_OK)
    return loaded;
  *why = jp_last_error();
  return nullptr;
}

// The spread's GPU plans against their CPU plans: FP16 plans within `tol` * (1 + |cpu|), Float32
// ones (--precision fp32) likewise with a tolerance of float32 sums in another order.
void spread_matches_cpu(ConvertOptions::Precision precision, double tol) {
  for (const GpuPlanModel& model : gpu_plan_models()) {
    if (!model.compare_on_gpu) continue;
    SCOPED_TRACE(model.name);
    ConvertResult g;
    std::string why;
    jp_plan* loaded = gpu_plan(model, &g, &why, precision);
    if (loaded == nullptr) GTEST_SKIP() << "no sm_90 GPU takes the plan here: " << why;
    const std::vector<std::vector<uint8_t>> inputs = random_inputs(loaded, 17);
    std::vector<bool> is_float;  // per output: compared within the tolerance, else bit for bit
    std::vector<bool> is_double;  // per output: float64 (kept so in GPU plans)
    for (int32_t o = 0; o < jp_plan_num_outputs(loaded); ++o) {
      jp_tensor_desc d{};
      EXPECT_EQ(jp_plan_output_desc(loaded, o, &d), JP_OK);
      is_float.push_back(d.dtype == JP_FLOAT32 || d.dtype == JP_FLOAT64);
      is_double.push_back(d.dtype == JP_FLOAT64);
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
      std::vector<double> w, v;
      if (is_double[o]) {
        w = want[o].as<double>(), v = got[o].as<double>();
      } else {
        for (float f : want[o].as<float>()) w.push_back(f);
        for (float f : got[o].as<float>()) v.push_back(f);
      }
      ASSERT_EQ(v.size(), w.size()) << "output " << o;
      size_t off = 0, first = w.size();
      for (size_t i = 0; i < w.size(); ++i)
        if (!(std::fabs(v[i] - w[i]) <= tol + tol * std::fabs(w[i])) && off++ == 0) first = i;
      EXPECT_EQ(off, 0u) << "output " << o << ": " << off << " of " << w.size()
                         << " elements off, the first " << first << ": got "
                         << (first < w.size() ? v[first] : 0.0) << ", want "
                         << (first < w.size() ? w[first] : 0.0);
    }
  }
}

TEST(GpuPlanRun, SpreadMatchesTheCpuPlanOnThisGpu) {
  spread_matches_cpu(ConvertOptions::Precision::kFp16, 3e-2);
}

// Float32 GPU plans compute what the CPU plan computes but for the order of float32 sums (and
// the GPU's own exp, erf, tanh): |gpu - cpu| <= 1e-4 * (1 + |cpu|).
TEST(GpuPlanRun, SpreadInFloat32MatchesTheCpuPlanOnThisGpu) {
  spread_matches_cpu(ConvertOptions::Precision::kFp32, 1e-4);
}

// The largest |x| of each Float32 tensor a step writes, by name (what calibration gathers).
void record_amax(void* user, int32_t, const char* name, jp_dtype dtype, const int64_t* dims,
                 int32_t rank, const void* data) {
  if (dtype != JP_FLOAT32) return;
  size_t n = 1;
  for (int32_t k = 0; k < rank; ++k) n *= static_cast<size_t>(dims[k]);
  double amax = 0;
  for (size_t i = 0; i < n; ++i)
    amax = std::max(amax, std::fabs(double(static_cast<const float*>(data)[i])));
  (*static_cast<std::map<std::string, double>*>(user))[name] = amax;
}

// A step observer on a Float32 GPU plan's context sees what the CPU plan's observer sees: every
// Float32 tensor of the same name holds the same largest |x| (layouts may differ: NHWC on the
// GPU), within 1e-4 * (1 + |x|), and most tensors of the CPU plan are seen on the GPU too.
TEST(GpuPlanRun, ObserverOfAFloat32PlanSeesTheCpuPlansTensors) {
  for (const GpuPlanModel& model : gpu_plan_models()) {
    if (!model.compare_on_gpu) continue;
    SCOPED_TRACE(model.name);
    ConvertResult g;
    std::string why;
    jp_plan* loaded = gpu_plan(model, &g, &why, ConvertOptions::Precision::kFp32);
    if (loaded == nullptr) GTEST_SKIP() << "no sm_90 GPU takes the plan here: " << why;
    const std::vector<std::vector<uint8_t>> inputs = random_inputs(loaded, 29);
    jp_plan_destroy(loaded);
    std::vector<PlanInput> in;
    for (const auto& b : inputs) in.push_back({b.data(), b.size()});
    std::map<std::string, double> cpu, gpu;
    const std::vector<PlanOutput> want =
        run_plan_inputs(convert_ok(model.builder).plan, in, 0, record_amax, &cpu);
    const std::vector<PlanOutput> got = run_plan_inputs(g.plan, in, 0, record_amax, &gpu);
    ASSERT_EQ(got.size(), want.size());
    size_t common = 0;
    for (const auto& [name, amax] : cpu) {
      const auto it = gpu.find(name);
      if (it == gpu.end()) continue;
      ++common;
      EXPECT_LE(std::fabs(it->second - amax), 1e-4 * (1 + amax)) << name;
    }
    EXPECT_GE(common * 2, cpu.size()) << common << " of " << cpu.size() << " tensors seen on both";
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
    expect_early_launches_give_the_same_bits(g.plan, in);
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
