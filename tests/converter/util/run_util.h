// Typed bytes, seeded random floats, raw initializers, converting a builder model (checked against the plan contract)
// and running its plan in process with the runtime.
#pragma once

#include <gtest/gtest.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/plan_runner.h"

namespace jetplan::converter::testing {

template <typename T>
inline std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
inline std::vector<T> values_of(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// n floats uniform in [lo, hi), the same for the same seed on every run.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// An initializer of any type from raw little-endian bytes.
inline void raw_initializer(ModelBuilder& m, const std::string& name, int type,
                     const std::vector<int64_t>& dims, const std::vector<uint8_t>& bytes) {
  m.empty_initializer(name, type, dims)->set_raw_data(std::string(bytes.begin(), bytes.end()));
}

// Every plan a test converts satisfies the plan contract (plan_contract.h).
inline void expect_contract(const std::vector<uint8_t>& plan) {
  for (const std::string& p : plan_contract_problems(plan)) ADD_FAILURE() << "contract: " << p;
}

struct Converted {
  std::vector<uint8_t> plan;
  const fb::Plan* fb = nullptr;
};

inline Converted convert(const ModelBuilder& m) {
  Converted c;
  try {
    c.plan = convert_onnx(m.bytes(), "model.onnx", {}).plan;
  } catch (const ConvertError& e) {
    ADD_FAILURE() << "conversion failed: " << e.what();
    return c;
  }
  expect_contract(c.plan);
  c.fb = read_plan(c.plan);
  EXPECT_NE(c.fb, nullptr);
  return c;
}

// run_plan_inputs (plan_runner.h) on inputs of any type: every output's bytes.
inline std::vector<std::vector<uint8_t>> run(const std::vector<uint8_t>& bytes,
                                             const std::vector<std::vector<uint8_t>>& inputs) {
  std::vector<PlanInput> in;
  for (const std::vector<uint8_t>& v : inputs) in.push_back({v.data(), v.size()});
  std::vector<std::vector<uint8_t>> outputs;
  for (PlanOutput& o : run_plan_inputs(bytes, in)) outputs.push_back(std::move(o.bytes));
  return outputs;
}

// Converts `m` with and without fusion and runs both plans on the same random inputs, one per
// entry of input_sizes (float32 elements, uniform in [-range, range)): every output of the fused
// plan within 1e-5 + 1e-5 |want| of the unfused one's. NaN fails.
inline void expect_same_as_unfused(const ModelBuilder& m, const std::vector<size_t>& input_sizes,
                                   float range = 1.f) {
  std::vector<std::vector<uint8_t>> inputs;
  uint32_t seed = 20261122;
  for (size_t n : input_sizes) inputs.push_back(bytes_of(random_floats(n, seed++, -range, range)));
  ConvertOptions unfused;
  unfused.fuse = false;
  const auto want = run(convert_ok(m, unfused).plan, inputs);
  const auto got = run(convert_ok(m).plan, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    const std::vector<float> g = values_of<float>(got[o]), w = values_of<float>(want[o]);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i)
      ASSERT_TRUE(std::fabs(g[i] - w[i]) <= 1e-5f + 1e-5f * std::fabs(w[i]))
          << "output " << o << " element " << i << ": " << g[i] << " vs " << w[i];
  }
}

}  // namespace jetplan::converter::testing
