// What the runtime tests check of a load: a plan that loads, and a plan refused with a given
// status and a message naming what is wrong.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"

namespace jetplan::testing {

// Loads `bytes`, expecting success; null (with the error reported) otherwise. The caller owns
// the plan (jp_plan_destroy).
inline jp_plan* load_plan_bytes(const std::vector<uint8_t>& bytes,
                                uint32_t flags = JP_LOAD_COPY) {
  jp_plan* plan = nullptr;
  EXPECT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), flags, &plan), JP_OK)
      << jp_last_error();
  return plan;
}

// Loads `bytes` with `flags`; expects `status`, no plan, and a last-error message containing
// `needle`.
inline void expect_refused(const std::vector<uint8_t>& bytes, uint32_t flags, jp_status status,
                           const std::string& needle) {
  jp_plan* plan = reinterpret_cast<jp_plan*>(0x1);
  EXPECT_EQ(jp_plan_load_buffer(bytes.data(), bytes.size(), flags, &plan), status)
      << jp_last_error();
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(jp_last_error()).find(needle), std::string::npos)
      << "message: " << jp_last_error() << "\nexpected to contain: " << needle;
}

inline void expect_refused(const std::vector<uint8_t>& bytes, jp_status status,
                           const std::string& needle) {
  expect_refused(bytes, JP_LOAD_COPY, status, needle);
}

}  // namespace jetplan::testing
