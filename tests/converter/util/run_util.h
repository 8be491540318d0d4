// Typed bytes, raw initializers, converting a builder model (checked against the plan contract)
// and running its plan in process with the runtime.
#pragma once

#include <gtest/gtest.h>
#include <jetplan/jetplan.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/converter/util/convert_util.h"

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

// An initializer of any type from raw little-endian bytes.
inline void raw_initializer(ModelBuilder& m, const std::string& name, int type,
                     const std::vector<int64_t>& dims, const std::vector<uint8_t>& bytes) {
  auto* t = m.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(bytes.begin(), bytes.end()));
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

// Loads the plan with the runtime, runs it once on `inputs` (in binding order) and returns
// every output's bytes. Empty when load, context or run fail (which fails the test).
inline std::vector<std::vector<uint8_t>> run(const std::vector<uint8_t>& bytes,
                                      const std::vector<std::vector<uint8_t>>& inputs) {
  std::vector<std::vector<uint8_t>> outputs;
  jp_plan* plan = nullptr;
  if (jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan) != JP_OK) {
    ADD_FAILURE() << "load: " << jp_last_error();
    return outputs;
  }
  jp_context* ctx = nullptr;
  if (jp_context_create(plan, nullptr, &ctx) != JP_OK) {
    ADD_FAILURE() << "context: " << jp_last_error();
    jp_plan_destroy(plan);
    return outputs;
  }
  bool ok = static_cast<size_t>(jp_plan_num_inputs(plan)) == inputs.size();
  EXPECT_TRUE(ok) << "the plan has " << jp_plan_num_inputs(plan) << " inputs";
  for (size_t i = 0; ok && i < inputs.size(); ++i) {
    ok = jp_context_set_input(ctx, static_cast<int32_t>(i), inputs[i].data(), inputs[i].size()) ==
         JP_OK;
    EXPECT_TRUE(ok) << "input " << i << ": " << jp_last_error();
  }
  if (ok && jp_context_run(ctx) != JP_OK) {
    ADD_FAILURE() << "run: " << jp_last_error();
    ok = false;
  }
  for (int32_t i = 0; ok && i < jp_plan_num_outputs(plan); ++i) {
    const void* data;
    size_t size;
    EXPECT_EQ(jp_context_get_output(ctx, i, &data, &size), JP_OK);
    const auto* p = static_cast<const uint8_t*>(data);
    outputs.emplace_back(p, p + size);
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return outputs;
}

}  // namespace jetplan::converter::testing
