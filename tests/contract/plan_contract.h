// An independent reading of the plan contract the runtime enforces at load (bindings, weight
// and arena placement, liveness: plan_contract.cc; each op family's params, shapes and dtypes:
// one rule per family in rules_<subject>.cc, step_contract.h), applied to every plan the
// converter tests produce. Written from the contract, not from the converter's code, so the two
// check each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter::testing {

// Every violation found, one line each; empty when the plan satisfies the contract.
std::vector<std::string> plan_contract_problems(const std::vector<uint8_t>& buffer);

// Whether the contract has a rule for `op`'s steps (every fb::OpFamily value has one; an op
// value past the schema's has none, and a step of it is a problem).
bool has_contract_rule(fb::OpFamily op);

// The plan, after VerifyPlanBuffer (nullptr when the buffer does not verify).
const fb::Plan* read_plan(const std::vector<uint8_t>& buffer);

// Shape of tensor `index` as a vector.
std::vector<int64_t> tensor_shape(const fb::Plan* plan, uint32_t index);

}  // namespace jetplan::converter::testing
