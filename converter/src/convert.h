// jetplan_converter's entry point: ONNX model bytes in, plan bytes out.
//
//   import (onnx_import.h) -> dead-node removal -> folding + support check (support.h)
//   -> Identity removal -> [BatchNorm folding, epilogue fusion] -> legalize -> lower (lower.h)
//   -> memory placement -> serialize (serialize.h)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "converter/src/graph.h"

namespace jetplan::converter {

constexpr const char* kConverterVersion = "0.1.0";

struct ConvertOptions {
  std::map<std::string, Shape> input_shapes;  // --shape NAME:DIMS
  bool fuse = true;                           // BatchNorm folding and epilogue fusion
  std::string target = "cpu";
};

struct ConvertSummary {
  size_t steps = 0;
  size_t tensors = 0;
  uint64_t weight_bytes = 0;
  uint64_t arena_bytes = 0;
  uint64_t arena_lower_bound = 0;
};

struct ConvertResult {
  std::vector<uint8_t> plan;  // a complete .jplan file
  ConvertSummary summary;
};

// The targets --target accepts.
std::vector<std::string> known_targets();

// Converts a serialized ONNX ModelProto. source_name (the file's base name) goes into the
// plan's metadata. Throws ConvertError with a one-line message that names the problem and,
// where there is one, the node; the caller adds the file name.
ConvertResult convert_onnx(const std::string& model_bytes, const std::string& source_name,
                           const ConvertOptions& options);

// "model.jplan: 23 steps, 41 tensors, weights 11.2 MB, arena 3211264 bytes (lower bound ...)"
std::string format_summary(const std::string& plan_name, const ConvertSummary& summary);

}  // namespace jetplan::converter
