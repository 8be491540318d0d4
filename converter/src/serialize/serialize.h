// Plan draft -> FlatBuffers bytes (schemas/plan.fbs). Deterministic: the same draft and metadata
// give the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "converter/src/lower/lower.h"

namespace jetplan::converter {

struct TargetDesc {
  std::string name = "cpu";
  fb::Backend backend = fb::Backend::CPU;
  uint32_t sm_arch = 0;
};

struct PlanMetadata {
  std::string converter_version;
  std::string source_sha256;
  std::string source_name;
  std::map<std::string, std::string> options;  // written sorted by key
};

std::vector<uint8_t> serialize_plan(const PlanDraft& draft, const TargetDesc& target,
                                    const PlanMetadata& metadata);

}  // namespace jetplan::converter
