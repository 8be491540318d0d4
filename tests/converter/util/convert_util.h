// Shared by the converter tests: converting builder models and looking into the plans.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <typeinfo>
#include <vector>

#include <jetplan/jetplan.h>

#include "converter/src/convert.h"
#include "converter/src/ir/error.h"
#include "tests/converter/util/onnx_builder.h"
#include "tests/contract/plan_contract.h"

namespace jetplan::converter::testing {

// Whether `plan` passes the runtime's load and prepare checks without a device (what a GPU plan
// must, deviceless); the loader's error where it does not.
inline ::testing::AssertionResult loads_without_device(const std::vector<uint8_t>& plan) {
  jp_plan* loaded = nullptr;
  if (jp_plan_load_buffer(plan.data(), plan.size(), JP_LOAD_NO_DEVICE, &loaded) != JP_OK)
    return ::testing::AssertionFailure() << jp_last_error();
  jp_plan_destroy(loaded);
  return ::testing::AssertionSuccess();
}

// The matchers the converter tests use most.
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Converts and checks the plan against the runtime contract.
inline ConvertResult convert_ok(const ModelBuilder& m, const ConvertOptions& options = {}) {
  ConvertResult r;
  try {
    r = convert_onnx(m.bytes(), "model.onnx", options);
  } catch (const ConvertError& e) {
    ADD_FAILURE() << "conversion failed: " << e.what();
    return r;
  }
  for (const std::string& p : plan_contract_problems(r.plan)) ADD_FAILURE() << "contract: " << p;
  return r;
}

// The conversion's error message ("" if it succeeded, which fails the test).
inline std::string convert_error(const std::string& bytes, const ConvertOptions& options = {}) {
  try {
    convert_onnx(bytes, "model.onnx", options);
  } catch (const ConvertError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << "multi-line error: " << what;
    return what;
  }
  ADD_FAILURE() << "conversion succeeded, an error was expected";
  return "";
}
inline std::string convert_error(const ModelBuilder& m, const ConvertOptions& options = {}) {
  return convert_error(m.bytes(), options);
}

// The error of a conversion for a GPU target (orin-agx), which must say that the model holds
// something unsupported in a GPU plan.
inline std::string gpu_plan_error(const ModelBuilder& m) {
  ConvertOptions gpu;
  gpu.target = "orin-agx";
  const std::string error = convert_error(m, gpu);
  EXPECT_THAT(error, HasSubstr("unsupported in a GPU plan"));
  return error;
}

// m with a float32 Relu "relu" from its input x [4] to its output y beside the nodes under test,
// converted for a GPU target: refused (gpu_plan_error), naming each of `parts` and never the
// Relu, since the GPU refusal names what it cannot run, not the whole model.
inline void expect_gpu_refusal_beside_relu(ModelBuilder m,
                                           std::initializer_list<const char*> parts) {
  m.node("Relu", {"x"}, {"y"}, "relu");
  const std::string error = gpu_plan_error(m);
  for (const char* part : parts) EXPECT_THAT(error, HasSubstr(part));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("relu")));
}

// Converts `default_trials` copies of the model bytes `good` (JETPLAN_FUZZ_TRIALS overrides the
// count), each with 1 to 3 bytes flipped at places drawn from `seed`: every copy must give a
// ConvertError (with no control character in its message, where `clean_messages`) or a plan the
// contract accepts, never another exception; some must fail. `label` starts each failure.
inline void expect_damaged_copies_convert_or_fail(const std::string& good, int default_trials,
                                                  uint32_t seed, const std::string& label,
                                                  bool clean_messages) {
  const char* env = std::getenv("JETPLAN_FUZZ_TRIALS");
  const int trials = env ? std::atoi(env) : default_trials;
  auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  int errors = 0, plans = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(next() % 3);
    for (int f = 0; f < flips; ++f) bad[next() % bad.size()] ^= static_cast<char>(1 + next() % 255);
    try {
      const ConvertResult r = convert_onnx(bad, "damaged.onnx", {});
      ++plans;
      for (const std::string& p : plan_contract_problems(r.plan))
        ADD_FAILURE() << label << "trial " << trial << ": contract: " << p;
    } catch (const ConvertError& e) {
      ++errors;
      const std::string what = e.what();
      for (char c : what)
        if (clean_messages && static_cast<unsigned char>(c) < 0x20)
          ADD_FAILURE() << "control character: " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << label << "trial " << trial << ": escaped as " << typeid(e).name() << ": "
                    << e.what();
    }
  }
  EXPECT_GT(errors, 0);
  EXPECT_EQ(errors + plans, trials);
}

// The plan of a conversion, read (a failure when it does not verify).
inline const fb::Plan* plan_of(const ConvertResult& r) {
  const fb::Plan* plan = read_plan(r.plan);
  EXPECT_NE(plan, nullptr);
  return plan;
}

inline std::vector<fb::OpFamily> step_ops(const fb::Plan* plan) {
  std::vector<fb::OpFamily> ops;
  for (const auto* s : *plan->steps()) ops.push_back(s->op());
  return ops;
}

// How many of the plan's steps are of `op`.
inline size_t count_steps(const fb::Plan* plan, fb::OpFamily op) {
  size_t n = 0;
  for (const auto* s : *plan->steps()) n += s->op() == op;
  return n;
}

// The plan's first step of `op`; null (no failure) when there is none.
inline const fb::Step* find_step_of(const fb::Plan* plan, fb::OpFamily op) {
  for (const auto* s : *plan->steps())
    if (s->op() == op) return s;
  return nullptr;
}

inline const fb::Step* find_step(const fb::Plan* plan, const std::string& name) {
  for (const auto* s : *plan->steps())
    if (s->name()->str() == name) return s;
  return nullptr;
}

// The floats of a weight tensor.
inline std::vector<float> weight_values(const fb::Plan* plan, uint32_t tensor) {
  const fb::Tensor* t = plan->tensors()->Get(tensor);
  EXPECT_EQ(t->storage(), fb::Storage::Weight);
  const float* p = reinterpret_cast<const float*>(plan->weights()->data() + t->offset());
  return std::vector<float>(p, p + t->size_bytes() / sizeof(float));
}

}  // namespace jetplan::converter::testing
