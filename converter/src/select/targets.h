// Device descriptions (targets/<name>.json): what --target names and what kernel selection knows
// of the device. The files are flat JSON objects read by a strict reader of our own (no JSON
// dependency): every key below is required, unknown keys are refused, errors name the file and
// the key.
//
//   {"name": "h100", "backend": "cuda", "sm_arch": 90, "sm_count": 132,
//    "max_shared_per_block": 232448, "shared_per_sm": 233472, "l2_bytes": 52428800,
//    "dram_gbps": 3350, "fp16_tensor_tflops": 989.4, "notes": "optional, free text"}
#pragma once

#include <string>
#include <vector>

#include "converter/src/serialize/serialize.h"
#include "kernels/cuda/select.h"

namespace jetplan::converter {

struct Target {
  TargetDesc plan;                   // what the plan's Target table records
  kernels::cuda::TargetInfo device;  // for kernel selection (CUDA targets)
};

// Parses one target file's text; `file` names it in errors. ConvertError on malformed input.
Target parse_target_json(const std::string& text, const std::string& file);

// "cpu", a target name (NAME.json in the first of target_dirs() that has it), or a path to a
// .json file (contains '/' or ends in ".json"). ConvertError (unknown_target_message) when there
// is no such target.
Target find_target(const std::string& name_or_path);

// True when `text` names a file rather than a target (find_target reads it).
bool is_target_path(const std::string& text);

// The folders find_target searches, in order: <prefix>/share/jetplan/targets and
// <prefix>/targets, where <prefix> is the folder above the running program's (an installed or a
// packed converter), then the source tree's targets/ (a build tree's converter) and the
// configured install prefix's share/jetplan/targets.
std::vector<std::string> target_dirs();

// "unknown target 'NAME' (known: cpu, ...); no NAME.json in DIR, DIR, ..."
std::string unknown_target_message(const std::string& name);

}  // namespace jetplan::converter
