// The runtime's C objects owned by the converter parts that run plans in process (calibration,
// the INT8 error measurements and report), the check that turns a failed call into a
// ConvertError, and the two things all of them do with a context: bind a sample, read a tensor.
#pragma once

#include <jetplan/jetplan.h>

#include <memory>
#include <string>
#include <vector>

#include "converter/src/ir/error.h"
#include "kernels/cpu/half.h"

namespace jetplan::converter {

struct PlanDeleter {
  void operator()(jp_plan* p) const { jp_plan_destroy(p); }
};
struct ContextDeleter {
  void operator()(jp_context* c) const { jp_context_destroy(c); }
};
using PlanPtr = std::unique_ptr<jp_plan, PlanDeleter>;
using ContextPtr = std::unique_ptr<jp_context, ContextDeleter>;

// Throws ConvertError "<what>: <status>: <the runtime's message>" unless status is JP_OK.
inline void check_runtime(jp_status status, const std::string& what) {
  if (status != JP_OK) fail(what, ": ", jp_status_string(status), ": ", jp_last_error());
}

// Loads a plan the converter just made (a copy of `bytes`); throws as check_runtime with `what`.
inline PlanPtr load_plan(const std::vector<uint8_t>& bytes, const std::string& what) {
  jp_plan* plan = nullptr;
  check_runtime(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), what);
  return PlanPtr(plan);
}

// Binds one sample's buffers (one per input, in the plan's input order) to ctx; throws as
// check_runtime with `what`.
inline void set_inputs(jp_context* ctx, const std::vector<std::vector<uint8_t>>& buffers,
                       const std::string& what) {
  for (size_t k = 0; k < buffers.size(); ++k)
    check_runtime(jp_context_set_input(ctx, static_cast<int32_t>(k), buffers[k].data(),
                                       buffers[k].size()),
                  what);
}

// `count` elements of a runtime tensor as floats: float16 decoded, integers converted (Int8 as
// its integers), bool and any other type byte by byte.
inline std::vector<float> tensor_floats(jp_dtype dtype, const void* data, size_t count) {
  std::vector<float> v(count);
  auto take = [&](auto tag) {
    const auto* p = static_cast<const decltype(tag)*>(data);
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(p[i]);
  };
  if (dtype == JP_FLOAT32) take(float{});
  else if (dtype == JP_INT64) take(int64_t{});
  else if (dtype == JP_INT32) take(int32_t{});
  else if (dtype == JP_INT8) take(int8_t{});
  else if (dtype == JP_FLOAT16)
    for (size_t i = 0; i < count; ++i) v[i] = kernels::half_to_float(static_cast<const uint16_t*>(data)[i]);
  else take(uint8_t{});
  return v;
}

}  // namespace jetplan::converter
