// Typed (8-bit) initializers, finding steps, running plans with byte inputs: the tests of the
// quantized and recurrent families.
#pragma once

#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <utility>

#include "kernels/kernels.h"
#include "tests/converter/util/plan_runner.h"
#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {

template <typename T>
void typed_initializer(ModelBuilder& m, const std::string& name, int type,
                       const std::vector<int64_t>& dims, const std::vector<T>& values) {
  m.empty_initializer(name, type, dims)->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

inline void u8_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<uint8_t>& v) {
  typed_initializer(m, name, onnx::TensorProto::UINT8, dims, v);
}
inline void i8_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<int8_t>& v) {
  typed_initializer(m, name, onnx::TensorProto::INT8, dims, v);
}

inline const fb::Step* only_step(const fb::Plan* plan, fb::OpFamily op) {
  const fb::Step* found = nullptr;
  for (const auto* s : *plan->steps())
    if (s->op() == op) {
      EXPECT_EQ(found, nullptr) << "two steps of " << fb::EnumNameOpFamily(op);
      found = s;
    }
  EXPECT_NE(found, nullptr) << "no step of " << fb::EnumNameOpFamily(op);
  return found;
}

// m converted and loaded, with its only step of `op` (only_step): see ConvertedStep.
inline ConvertedStep convert_to_step(const ModelBuilder& m, fb::OpFamily op) {
  ConvertedStep c;
  c.result = convert_and_load(m);
  c.plan = plan_of(c.result);
  if (c.plan != nullptr) c.step = only_step(c.plan, op);
  return c;
}

using Bytes = std::vector<uint8_t>;

// Runs a plan once with the inputs in binding order (plan_runner.h); the outputs' bytes in
// binding order.
inline std::vector<Bytes> run_plan(const std::vector<uint8_t>& buffer, const std::vector<Bytes>& inputs) {
  std::vector<PlanInput> in;
  for (const Bytes& b : inputs) in.push_back({b.data(), b.size()});
  std::vector<Bytes> outputs;
  for (PlanOutput& o : run_plan_inputs(buffer, in)) outputs.push_back(std::move(o.bytes));
  return outputs;
}

}  // namespace jetplan::converter::testing
