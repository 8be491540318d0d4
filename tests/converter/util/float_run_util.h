// Float ramps, converting and running with float inputs, the step families of a plan (the op
// tests of data movement and math).
#pragma once

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>

#include "converter/src/import/onnx_import.h"
#include "converter/src/ops/check.h"
#include "converter/src/ops/registry.h"
#include "kernels/cpu/half.h"
#include "tests/converter/util/run_util.h"
#include "tests/converter/util/convert_util.h"
#include "tests/runtime/plan_builder.h"

namespace jetplan::converter::testing {

using fb::OpFamily;

inline std::vector<float> iota_f(size_t n, float start = 0.f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Converts, runs with float inputs and returns output 0 as floats.
inline std::vector<float> run_f32(const ModelBuilder& m, const std::vector<std::vector<float>>& inputs,
                           Converted* c = nullptr) {
  Converted local = convert(m);
  std::vector<std::vector<uint8_t>> in;
  for (const auto& v : inputs) in.push_back(bytes_of(v));
  const auto out = run(local.plan, in);
  if (c != nullptr) *c = std::move(local);
  return out.empty() ? std::vector<float>{} : values_of<float>(out[0]);
}

inline std::vector<OpFamily> ops_of(const Converted& c) {
  return c.fb != nullptr ? step_ops(c.fb) : std::vector<OpFamily>{};
}

}  // namespace jetplan::converter::testing
