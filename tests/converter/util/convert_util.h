// Shared by the converter tests: converting builder models and looking into the plans.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "converter/src/convert.h"
#include "converter/src/ir/error.h"
#include "tests/converter/util/onnx_builder.h"
#include "tests/contract/plan_contract.h"

namespace jetplan::converter::testing {

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

inline std::vector<fb::OpFamily> step_ops(const fb::Plan* plan) {
  std::vector<fb::OpFamily> ops;
  for (const auto* s : *plan->steps()) ops.push_back(s->op());
  return ops;
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
