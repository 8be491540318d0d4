// An independent reading of the plan contract the runtime enforces at load (bindings, weight
// and arena placement, liveness, per-family shapes), applied to every plan the converter tests
// produce. Written from the contract, not from the converter's code, so the two check each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter::testing {

// Every violation found, one line each; empty when the plan satisfies the contract.
std::vector<std::string> plan_contract_problems(const std::vector<uint8_t>& buffer);

// The plan, after VerifyPlanBuffer (nullptr when the buffer does not verify).
const fb::Plan* read_plan(const std::vector<uint8_t>& buffer);

// Shape of tensor `index` as a vector.
std::vector<int64_t> tensor_shape(const fb::Plan* plan, uint32_t index);

}  // namespace jetplan::converter::testing
