// The runtime's C objects owned by the converter parts that run plans in process (calibration,
// the INT8 report), and the check that turns a failed call into a ConvertError.
#pragma once

#include <jetplan/jetplan.h>

#include <memory>
#include <string>
#include <vector>

#include "converter/src/ir/error.h"

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

}  // namespace jetplan::converter
